// The install a user does: pack the project, install the tarball into an empty app, and use it
// there with import and with require, the CLI, and the documented client and ledger examples.
// The tarball is packed from a copy of the tree holding this tree's own build, fresh (a file of a
// removed source is left out, as prepack's build would): `npm test` has just built it, and
// compiling everything again for the tarball took most of this test's time. CI's `npm ci` on a
// fresh clone runs that build (scripts/build-package.js, through prepare). Offline: the app's
// node_modules is seeded with the runtime dependencies this repository already installed, and
// npm adds the tarball alone. The steps that do not need each other's results run side by side
// (the app is seeded while npm packs; a test's processes start together): this file is the
// suite's longest, and most of it is waiting for npm and node processes.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { EXAMPLE_DRIVERS } from '../support/example-drivers.js';
import { REPO_ROOT, repoPath } from '../support/repo-path.js';

const work = mkdtempSync(join(tmpdir(), 'oncely-pack-'));
const app = join(work, 'app');
const npmCache = join(work, 'npm-cache');
const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
let packed: string[] = [];

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `cmd args` in `cwd` to its end (killed after 180 s), without blocking this process. */
const run = (cmd: string, args: string[], cwd: string): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      timeout: 180_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A cache of its own, empty, beside the app (in memory when the runner's TMPDIR is): the
      // install needs nothing from a cache (the dependencies are seeded, the tarball is a file), and
      // in the user's ~/.npm it read the optional peers' full registry documents (express's and
      // fastify's are megabytes) and wrote the tarball's entry to disk. Nothing is left behind there.
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_cache: npmCache },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });

before(async () => {
  // A copy of the tree: the tracked and new files, the installed node_modules, and the build.
  const clone = join(work, 'clone');
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of [...files, ...freshBuild()]) {
    if (!existsSync(join(REPO_ROOT, file))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(clone, file));
  }
  symlinkSync(repoPath('node_modules'), join(clone, 'node_modules'));
  // The build is there: prepack (which builds it) and prepare need not run.
  const packing = run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', work],
    clone,
  );

  // Meanwhile, an app with the runtime dependencies (and theirs) already in node_modules.
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  seedInstalled(runtimeClosure(Object.keys(pkg.dependencies)));

  const pack = await packing;
  assert.equal(pack.status, 0, pack.stderr);
  const [info] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
  packed = info.files.map((f) => f.path);
  const install = await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', join(work, info.filename)],
    app,
  );
  assert.equal(install.status, 0, install.stderr);
});

after(() => rmSync(work, { recursive: true, force: true }));

test('the tarball of a fresh clone holds the built package, its license and no sources', () => {
  for (const file of [
    'package.json',
    'README.md',
    'LICENSE',
    'dist/src/index.js',
    'dist/src/index.d.ts',
    'dist/apps/cli/main.js',
    'dist/src/http/index.js',
    'web/dist/index.html',
  ]) {
    assert.ok(packed.includes(file), `${file} is packed`);
  }
  const unbuilt = [...listFiles(repoPath('src')), ...listFiles(repoPath('apps'))]
    .filter((f) => f.endsWith('.ts'))
    .map((f) => relative(REPO_ROOT, f).replace(/\.ts$/, ''))
    .filter((f) => !packed.includes(`dist/${f}.js`) || !packed.includes(`dist/${f}.d.ts`));
  assert.deepEqual(unbuilt, [], 'every source module is packed, built, with its types');
  assert.deepEqual(
    packed.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts')),
    [],
    'no TypeScript sources',
  );
  assert.deepEqual(
    packed.filter((f) => /^dist\/(test|bench|examples)\//.test(f)),
    [],
    'no tests, benches or examples',
  );
});

test('every shipped source map carries its sources', () => {
  const root = join(app, 'node_modules', 'oncely', 'dist');
  const maps = listFiles(root).filter((f) => f.endsWith('.js.map'));
  assert.ok(maps.length > 50);
  for (const map of maps) {
    const { sources, sourcesContent } = JSON.parse(readFileSync(map, 'utf8')) as {
      sources: string[];
      sourcesContent?: (string | null)[];
    };
    assert.equal(
      sourcesContent?.filter((s) => typeof s === 'string').length,
      sources.length,
      `${map} embeds its sources`,
    );
  }
});

test('the app loads oncely with import and with require, drivers not installed', async () => {
  const [imported, required] = await Promise.all([
    run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { createClient } from 'oncely'; import { createIdempotencyMiddleware } from 'oncely/http'; import { createMemoryStore } from 'oncely/stores/memory'; console.log(typeof createClient, typeof createIdempotencyMiddleware, typeof createMemoryStore)",
      ],
      app,
    ),
    // require(esm): Node >= 20.19 and >= 22.12, through the exports' "default" condition.
    run(
      process.execPath,
      [
        '-e',
        "const { createClient } = require('oncely'); const { createMemoryStore } = require('oncely/stores/memory'); console.log(typeof createClient, typeof createMemoryStore)",
      ],
      app,
    ),
  ]);
  assert.equal(imported.stdout.trim(), 'function function function', imported.stderr);
  assert.equal(required.stdout.trim(), 'function function', required.stderr);
  assert.equal(required.stderr, '', 'no warning');
});

test('the CLI runs from the app; a store without its driver is one clear line', async () => {
  const bin = join(app, 'node_modules', '.bin', 'oncely');
  const [lab, serve] = await Promise.all([
    run(bin, ['lab', 'dropbox'], app),
    run(bin, ['serve', '--port', '0', '--data-dir', join(work, 'data')], app),
  ]);
  assert.equal(lab.status, 0, lab.stderr);
  assert.equal(serve.status, 1);
  assert.match(
    serve.stderr,
    /needs the better-sqlite3 package \(an optional peer dependency of oncely\): npm install better-sqlite3@12/,
  );
});

test('the documented client and ledger examples run in the app', async () => {
  // What `npm install better-sqlite3` would add (offline: the build this repository already has).
  for (const name of runtimeClosure(['better-sqlite3']).filter(
    (n) => n !== 'prebuild-install' && !existsSync(join(app, 'node_modules', n)),
  )) {
    cpSync(repoPath('node_modules', name), join(app, 'node_modules', name), { recursive: true });
  }
  // Side by side: each has a server and a database of its own.
  await Promise.all(
    ['client', 'ledger'].map((name) => {
      const script = join(app, `${name}.mjs`);
      cpSync(repoPath('dist', 'examples', `${name}.js`), script);
      return EXAMPLE_DRIVERS[`examples/${name}.ts`]!(script, app);
    }),
  );
});

/**
 * The files of this tree's build that a fresh build makes: web/dist, and each dist/src and
 * dist/apps output
 * whose TypeScript source is still there (tsc never deletes the output of a removed source).
 */
function freshBuild(): string[] {
  const built = (dir: string) => listFiles(repoPath(dir)).map((f) => relative(REPO_ROOT, f));
  const hasSource = (file: string) =>
    existsSync(repoPath(file.replace(/^dist\//, '').replace(/(\.d\.ts|\.js|\.js\.map)$/, '.ts')));
  return [
    ...built('dist/src').filter(hasSource),
    ...built('dist/apps').filter(hasSource),
    ...built('web/dist'),
  ];
}

/**
 * Puts `names` in the app's node_modules as an install would have left them: each package, and a
 * link in node_modules/.bin for each command it declares. npm takes a package without its links
 * for a broken one and fetches it again, which an empty cache, offline, cannot give.
 */
function seedInstalled(names: string[]): void {
  const bin = join(app, 'node_modules', '.bin');
  for (const name of names) {
    const target = join(app, 'node_modules', name);
    cpSync(repoPath('node_modules', name), target, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const commands =
      typeof manifest.bin === 'string'
        ? { [name.split('/').at(-1)!]: manifest.bin }
        : (manifest.bin ?? {});
    for (const [command, file] of Object.entries(commands)) {
      mkdirSync(bin, { recursive: true });
      symlinkSync(relative(bin, join(target, file)), join(bin, command));
    }
  }
}

/** The packages `names` need at run time, from this repository's lockfile (all hoisted here). */
function runtimeClosure(names: string[]): string[] {
  const lock = JSON.parse(readFileSync(repoPath('package-lock.json'), 'utf8')) as {
    packages: Record<string, { dependencies?: Record<string, string> }>;
  };
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name) || name === 'prebuild-install') continue; // an install-time downloader, not needed to run
    seen.add(name);
    queue.push(...Object.keys(lock.packages[`node_modules/${name}`]?.dependencies ?? {}));
  }
  return [...seen];
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name)) : [join(dir, e.name)],
  );
}
