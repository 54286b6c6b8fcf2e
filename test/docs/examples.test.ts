// Every code block of the README, docs/ and examples/README.md is checked: example files run
// (test/support/example-drivers.ts), shell blocks run in bash against a fresh `oncely serve` (in
// this process: test/support/serve-in-process.ts), and the rest say why they are shown only. How to add one: examples/README.md.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCliHost, type CliHost } from '../support/cli-host.js';
import { docFiles, parseBlocks, type DocBlock } from '../support/doc-blocks.js';
import { EXAMPLE_DRIVERS } from '../support/example-drivers.js';
import { startServeInProcess, type InProcessServe } from '../support/serve-in-process.js';
import { CLI, REPO_ROOT, repoPath } from '../support/repo-path.js';

const blocks = docFiles(REPO_ROOT).flatMap((doc) => parseBlocks(REPO_ROOT, doc));
const where = (block: DocBlock): string => `${block.doc}:${block.line}`;
// Every TypeScript file, those of a whole app (examples/nextjs/) too, but not what its framework
// writes (.next/, next-env.d.ts). examples/express-prisma/ compiles with the client its README
// generates, and runs as its README says (test/http/express-prisma-example.test.ts).
const exampleFiles = readdirSync(repoPath('examples'), { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
  .filter((name) => !name.startsWith('express-prisma/'))
  .filter(
    (name) => !name.split('/').some((part) => part.startsWith('.') || part === 'node_modules'),
  )
  .map((name) => `examples/${name}`);

test('every code block says how the suite checks it', () => {
  const unmarked = blocks
    .filter((b) => b.marker.kind === 'missing' || b.marker.kind === 'malformed')
    .map(where);
  assert.deepEqual(
    unmarked,
    [],
    'put <!-- example: examples/FILE -->, <!-- run: sh --> or <!-- not run: why --> on the line above each fence (examples/README.md)',
  );
  assert.ok(
    blocks.length >= 12,
    `found only ${blocks.length} blocks: is the parser still finding them?`,
  );
});

test('a shell block runs the CLI as `npx oncely …`, which works from a clone and an install', () => {
  const bare = blocks
    .filter((b) => b.marker.kind !== 'example')
    .flatMap((b) =>
      b.body
        .split('\n')
        .map((line, i) => ({ line, at: `${b.doc}:${b.line + 1 + i}` }))
        .filter(({ line }) => /^(\$ )?oncely (serve|deliver|outbox|hook|lab|sim)(\s|$)/.test(line)),
    )
    .map(({ at, line }) => `${at}: ${line}`);
  assert.deepEqual(bare, []);
});

test('an example block is its file, byte for byte', () => {
  for (const block of blocks) {
    if (block.marker.kind !== 'example') continue;
    const path = repoPath(block.marker.file);
    assert.ok(
      existsSync(path),
      `${where(block)} includes ${block.marker.file}, which does not exist`,
    );
    assert.equal(
      block.body,
      readFileSync(path, 'utf8'),
      `${where(block)} differs from ${block.marker.file}: run \`node scripts/sync-examples.js\``,
    );
  }
});

test('every file in examples/ is shown in the docs and has a driver', () => {
  const included = new Set(
    blocks.flatMap((b) => (b.marker.kind === 'example' ? [b.marker.file] : [])),
  );
  for (const file of exampleFiles) {
    assert.ok(included.has(file), `${file} is in no README or docs block`);
    assert.ok(EXAMPLE_DRIVERS[file], `${file} has no driver in test/support/example-drivers.ts`);
  }
});

// Side by side: each example is a process of its own with its own server, database or schema,
// and mostly waits for its node to start.
describe('example files run', { concurrency: 4 }, () => {
  for (const file of exampleFiles) {
    const driver = EXAMPLE_DRIVERS[file];
    if (!driver) continue;
    test(file, () => driver(repoPath('dist', file.replace(/\.ts$/, '.js')), REPO_ROOT));
  }
});

// Three at a time: each block is a bash of its own in a directory of its own, against a server of
// its own; the host runs their `npx oncely` calls one at a time (each in its caller's directory).
describe('shell blocks run', { concurrency: 3 }, () => {
  // `npx oncely` as a user of the package has it: this build, through runCli in this process
  // (test/support/cli-host.ts) rather than a node process per call.
  const bin = mkdtempSync(join(tmpdir(), 'oncely-doc-bin-'));
  writeFileSync(
    join(bin, 'npx'),
    '#!/bin/sh\n[ "$1" = oncely ] || { echo "examples may use only npx oncely" >&2; exit 127; }\nshift\nexec oncely "$@"\n',
  );
  chmodSync(join(bin, 'npx'), 0o755);
  let host: CliHost | undefined;
  before(async () => (host = await startCliHost(bin)));
  after(async () => {
    await host?.close();
    rmSync(bin, { recursive: true, force: true });
  });

  test("`npx oncely` in a block, as a process: this build's binary", async () => {
    const real = mkdtempSync(join(tmpdir(), 'oncely-doc-real-'));
    try {
      writeFileSync(join(real, 'oncely'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
      chmodSync(join(real, 'oncely'), 0o755);
      const env = { ...process.env, PATH: `${real}:${bin}:${process.env['PATH'] ?? ''}` };
      const run = await runBash('npx oncely --version\nnpx oncely lab dropbox\n', real, env);
      assert.equal(run.code, 0, run.output);
      assert.equal(run.output.split('\n')[0], packageVersion());
    } finally {
      rmSync(real, { recursive: true, force: true });
    }
  });

  for (const block of blocks) {
    const marker = block.marker;
    if (marker.kind !== 'run') continue;
    test(`${where(block)}${marker.serveArgs.length ? ` (serve ${marker.serveArgs.join(' ')})` : ''}`, async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'oncely-doc-'));
      let serve: InProcessServe | undefined;
      try {
        if (marker.server) serve = await startServeInProcess(marker.serveArgs);
        const env = {
          ...process.env,
          PATH: `${bin}:${process.env['PATH'] ?? ''}`,
          ...(serve ? { URL: serve.url, TOKEN: serve.token } : {}),
        };
        const run = await runBash(block.body, cwd, env);
        assert.equal(run.code, 0, `${where(block)} failed (exit ${run.code}):\n${run.output}`);
        if (serve) {
          const failed = serve
            .stdout()
            .split('\n')
            .filter((line) => /"status":5\d\d/.test(line));
          assert.deepEqual(failed, [], `${where(block)}: the server answered 5xx`);
          const stopping = serve;
          serve = undefined;
          assert.equal(
            await stopping.stop(),
            0,
            `${where(block)}: serve stopped badly:\n${stopping.stderr()}`,
          );
        }
      } finally {
        await serve?.stop();
        rmSync(cwd, { recursive: true, force: true });
      }
    });
  }
});

function runBash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd,
      env,
      timeout: 60_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version: string })
    .version;
}
