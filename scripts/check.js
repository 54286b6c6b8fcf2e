#!/usr/bin/env node
// `npm test` after the build: the lint, the format check and the tests, at the same time; then
// the PostgreSQL tests once more on pg 8.11.
//   node scripts/check.js
// They read the sources and the build and write nothing the others read, so none waits for
// another. The lint is oxlint with tsgolint's type-aware rules (.oxlintrc.json) and the format
// check is Biome's formatter (biome.json): both native and multi-threaded, together a few CPU
// seconds for the whole tree, where the type-checked ESLint and Prettier they replaced took
// about 58. The tests print as they go; the lint's and the format check's output follows
// theirs, then one line for each step that failed. (Run after the build: it imports from dist.)
import { spawn } from 'node:child_process';
import { packageBin as bin } from '../dist/test/support/package-bin.js';
import { pgModuleTests } from './pg-module-tests.js';

/** Runs `node args`; resolves with its exit code and, unless `inherit`, what it printed. */
function run(args, { inherit = false, env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      stdio: inherit ? 'inherit' : 'pipe',
      env: { ...process.env, ...env },
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, output }));
  });
}

const steps = [
  {
    name: 'lint',
    run: run([bin('oxlint'), '--quiet'], {
      // tsgolint (Go) collects its garbage less often: about a fifth less CPU for half a GB more
      // at most, CPU the tests running beside it use (unless GOGC is set already).
      env: { GOGC: process.env['GOGC'] ?? '400' },
    }),
  },
  { name: 'format check', run: run([bin('@biomejs/biome', 'biome'), 'format', '.']) },
  { name: 'tests', run: run(['scripts/run-tests.js'], { inherit: true }) },
];

const results = await Promise.all(steps.map((step) => step.run));
// The PostgreSQL store and ledger tests again on the oldest pg minor the peer range allows
// (pg-8-11 is a pinned alias of pg 8.11): it has no pipeline mode, so the one-at-a-time path of
// the store's transport runs too. Only the files whose pools come from that pg: the others (the
// ORM and crash tests, whose pools the ORMs and children make from `pg` itself) would run just
// as they did above, about 40 s of the run's end. After the rest, which use the same database.
steps.push({ name: 'tests on pg 8.11' });
results.push(
  await run(['scripts/run-tests.js', ...pgModuleTests(['test/stores/', 'test/ledger/'])], {
    inherit: true,
    env: { ONCELY_TEST_PG_MODULE: 'pg-8-11' },
  }),
);
const failed = [];
for (const [i, { name }] of steps.entries()) {
  const { code, signal, output } = results[i];
  // A passing lint or format check has nothing to say beyond its count of files.
  if (code !== 0 && output) process.stdout.write(`\n# ${name}\n${output}`);
  if (code !== 0) failed.push(`${name} failed (${signal ?? `exit ${code}`})`);
}
for (const line of failed) console.error(line);
process.exit(failed.length === 0 ? 0 : 1);
