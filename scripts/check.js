#!/usr/bin/env node
// `npm test` after the build: the lint, the format check and the tests, at the same time.
//   node scripts/check.js
// They read the sources and the build and write nothing the others read, so none waits for
// another. The tests spend much of their time waiting on databases, servers and a browser, and
// the lint (a type-checked program of its own) fills those waits: run one after the other, the
// cores stood idle for much of the tests' run. The tests print as they go; the lint's and the
// format check's output follows theirs, then one line for each step that failed. A tree that
// linted clean as it is now is not linted again (scripts/lint-record.js).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lintedClean, recordCleanLint, treeKey } from './lint-record.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const require = createRequire(import.meta.url);
/** The script of an installed package's command (what node_modules/.bin links to). */
function bin(pkg) {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest);
  return join(dirname(manifest), typeof bin === 'string' ? bin : bin[pkg]);
}

/** Runs `node args`; resolves with its exit code and, unless `inherit`, what it printed. */
function run(args, inherit) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: inherit ? 'inherit' : 'pipe' });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, output }));
  });
}

async function lint() {
  const key = treeKey(root);
  if (lintedClean(root, key))
    return { code: 0, output: 'skipped: the tree is as it was when it last linted clean\n' };
  const result = await run([bin('eslint'), '.']);
  if (result.code === 0 && result.output === '') recordCleanLint(root, key);
  return result;
}

const steps = [
  ['lint', lint()],
  [
    'format check',
    run([
      bin('prettier'),
      '--check',
      '--cache',
      '--cache-strategy',
      'content',
      '--log-level',
      'warn',
      '.',
    ]),
  ],
  ['tests', run(['scripts/run-tests.js'], true)],
];

const results = await Promise.all(steps.map(([, step]) => step));
const failed = [];
for (const [i, [name]] of steps.entries()) {
  const { code, signal, output } = results[i];
  if (output) process.stdout.write(`\n# ${name}\n${output}`);
  if (code !== 0) failed.push(`${name} failed (${signal ?? `exit ${code}`})`);
}
for (const line of failed) console.error(line);
process.exit(failed.length === 0 ? 0 : 1);
