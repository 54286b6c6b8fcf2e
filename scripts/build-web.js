#!/usr/bin/env node
// Builds the simulator page and the outbox view (web/outbox.html, `oncely outbox ui`) into
// packages/cli/web/dist/: esbuild bundles the page and its batch worker
// (the CLI's src/sim from source, chart.js tree-shaken into a chunk loaded only when the batch runs),
// and the html and css are copied beside them. The page's TypeScript is type-checked first
// against web/tsconfig.json (no node types: the page and the sim it bundles run in a browser).
//   node scripts/build-web.js            type-check, bundle, print the page weight
//   node scripts/build-web.js --no-check bundle only (quick iteration)
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'packages', 'cli', 'web');
const out = join(web, 'dist');

if (!process.argv.includes('--no-check')) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', join(web, 'tsconfig.json')], { stdio: 'inherit' });
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  absWorkingDir: root,
  entryPoints: {
    main: 'packages/cli/web/src/main.ts',
    'batch-worker': 'packages/cli/web/src/batch-worker.ts',
  },
  outdir: out,
  bundle: true,
  // Splitting lets main.js load chart.js with import() after the batch, so the first outcome
  // waits for the simulator only.
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'eof',
  logLevel: 'warning',
});
// The outbox view (`oncely outbox ui`): a page of its own on the same styles, bundled apart so
// that the simulator page's chunks stay as they are.
await build({
  absWorkingDir: root,
  entryPoints: { outbox: 'packages/cli/web/src/outbox/outbox-page.ts' },
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
for (const file of ['index.html', 'styles.css', 'outbox.html', 'outbox.css'])
  copyFileSync(join(web, file), join(out, file));

// The page weight: a first visit fetches the html, css, main.js and the chunks it imports
// statically; the batch's worker and the charts (chart.js) load with import() when they run.
const files = listFiles(out);
const staticImports = (file, seen = new Set()) => {
  seen.add(file);
  for (const [, path] of readFileSync(file, 'utf8').matchAll(/from"(\.\/[^"]+)"/g)) {
    const target = join(dirname(file), path);
    if (!seen.has(target)) staticImports(target, seen);
  }
  return seen;
};
const firstVisit = staticImports(join(out, 'main.js'));
const outboxOnly = (file) => /outbox\.(html|css|js)$/.test(file);
const batchOnly = (file) => file.endsWith('.js') && !firstVisit.has(file) && !outboxOnly(file);
const weigh = (list) =>
  list.reduce(
    (sum, file) => {
      const bytes = readFileSync(file);
      return { raw: sum.raw + bytes.length, gzip: sum.gzip + gzipSync(bytes, { level: 9 }).length };
    },
    { raw: 0, gzip: 0 },
  );
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const all = weigh(files);
const first = weigh(files.filter((file) => !batchOnly(file) && !outboxOnly(file)));
console.log(
  `web/dist: ${files.length} files, ${kb(all.raw)} raw, ${kb(all.gzip)} gzip; first visit ${kb(first.raw)} raw, ${kb(first.gzip)} gzip ` +
    `(the batch's worker and chart.js chunk load when it runs)`,
);

function listFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}
