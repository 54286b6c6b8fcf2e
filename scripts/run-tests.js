#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's own test runner.
//   node scripts/run-tests.js [filter]   the files whose path contains filter (all by default)
// Node 20 has no glob support in `node --test`, so we list the files ourselves. It also starts a
// process per file, and starting one (node, the runner, the modules under test) costs about what a
// quick file's tests do. So the quick files run a few to a process, each inside a describe named
// after it (its before/after hooks stay its own); the files that take seconds get a process each;
// the browser files share one (and one Chromium: test/web/browser-env.ts). Longest first, so no
// long file starts last. ONCELY_TEST_CONCURRENCY sets how many processes run at once.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/**
 * The files that take seconds, slowest first (as measured alone on a 2-core machine): a process
 * each. A file not listed is grouped with others: list a new one that takes more than a couple
 * of seconds of its own.
 */
const SLOW_FIRST = [
  'docs/examples',
  'package/pack-install',
  'journal/postgres-two-workers',
  'server/notify-outbox',
  'design/lint',
  'journal/outbox-crash',
  'server/hostile/edge',
  'sim/fleet-cli',
  'client/fetch-sockets',
  'server/hostile/callers',
  'cli/serve-config',
];
/** Quick files per process: enough to share the start-up, few enough to keep every core busy. */
const GROUP_SIZE = 8;
/** The processes at once: the cores, and one more, as many files wait on a database or a browser. */
const CONCURRENCY = Number(process.env['ONCELY_TEST_CONCURRENCY'] ?? 3);

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const filter = process.argv[2];
// tsc never deletes output: a test whose source was moved or removed leaves a stale .js behind.
const hasSource = (file) => existsSync(file.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts'));
const files = findTests('dist/test')
  .filter(hasSource)
  .filter((file) => !filter || file.includes(filter))
  .sort();
if (files.length === 0) {
  console.error(`no test files found${filter ? ` matching ${filter}` : ''}`);
  process.exit(1);
}

const name = (file) => relative(join('dist', 'test'), file).replace(/\.test\.js$/, '');
const slowRank = (file) => SLOW_FIRST.indexOf(name(file));
const usesBrowser = (file) => readFileSync(file, 'utf8').includes('/browser-env.js');
const browser = files.filter(usesBrowser);
const slow = files
  .filter((f) => slowRank(f) >= 0 && !usesBrowser(f))
  .sort((a, b) => slowRank(a) - slowRank(b));
const quick = files.filter((f) => slowRank(f) < 0 && !usesBrowser(f));

const groupDir = mkdtempSync(join(tmpdir(), 'oncely-test-groups-'));
/**
 * One file for `node --test` that runs `members` in turn, each in a describe of its own. A member
 * is imported only once the one before it has finished, hooks included, so its top-level code
 * (a database probe, a server) runs alone as it would in a process of its own. node:test finds
 * the suite a test belongs to from the async context: the import runs in the describe's.
 */
const GROUP_HEAD = `import { executionAsyncResource } from 'node:async_hooks';
import { after, describe } from 'node:test';

let previous = Promise.resolve();
for (const [name, url] of MEMBERS) {
  const turn = previous;
  let finished;
  previous = new Promise((resolve) => (finished = resolve));
  describe(name, async () => {
    const suite = executionAsyncResource();
    await turn;
    try {
      await suite.runInAsyncScope(() => import(url));
    } catch (error) {
      finished();
      throw error;
    }
    suite.runInAsyncScope(() => after(finished));
  });
}
`;
function group(members) {
  if (members.length === 1) return members[0];
  const path = join(groupDir, `group-${readdirSync(groupDir).length + 1}.test.mjs`);
  const list = members.map((file) => [file, pathToFileURL(resolve(file)).href]);
  writeFileSync(path, `const MEMBERS = ${JSON.stringify(list, null, 2)};\n${GROUP_HEAD}`);
  return path;
}

const runs = [];
if (browser.length > 0) runs.push(group(browser));
runs.push(...slow);
for (let i = 0; i < quick.length; i += GROUP_SIZE) runs.push(group(quick.slice(i, i + GROUP_SIZE)));

const result = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-reporter=spec', ...runs],
  { stdio: 'inherit' },
);
rmSync(groupDir, { recursive: true, force: true });
process.exit(result.status ?? 1);
