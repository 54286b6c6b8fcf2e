#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's own test runner.
//   node scripts/run-tests.js [filter]   the files whose path contains filter (all by default)
// Node 20 has no glob support in `node --test`, so we list the files ourselves. It also starts a
// process per file, and starting one (node, the runner, the modules under test) costs about what a
// quick file's tests do. So files share processes, each file inside a describe named after it (its
// before/after hooks stay its own): neighbours in path order, which load the same modules, share
// one of about PROCESS_SECONDS; a long file has a process of its own; the browser files share one
// (and one Chromium: test/web/browser-env.ts). The longest start first, so none starts last.
// ONCELY_TEST_CONCURRENCY sets how many processes run at once.
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
 * About how many seconds the files that take more than one spend in a full run on a loaded
 * 2-core machine: a hint to spread them over the processes, never a result (a file missing here
 * counts as QUICK_SECONDS; a wrong figure costs time only). Add a new file that takes seconds.
 */
const SECONDS = {
  'web/page': 12,
  'web/layout': 11,
  'package/pack-install': 10,
  'docs/examples': 9,
  'journal/postgres-two-workers': 9,
  'server/notify-outbox': 8,
  'stores/postgres': 7,
  'stores/crash': 6.5,
  'stores/bounded-sweep': 6.5,
  'journal/outbox-crash': 6,
  'e2e/serve-shutdown': 5.5,
  'bench/anchors': 5.5,
  'server/store-view': 5.5,
  'client/fetch-sockets': 5,
  'web/fleet-page': 4.5,
  'server/hostile/json': 4,
  'design/lint': 4,
  'sim/fleet-cli': 4,
  'sim/fleet-models': 3.5,
  'server/hostile/slow': 3.5,
  'server/hostile/edge': 3,
  'stores/postgres-partitions': 3,
  'services/notes': 3,
  'e2e/serve-deliver': 3,
  'cli/serve-config': 3,
  'server/bad-input': 2.5,
  'http/race': 2.5,
  'services/hook-server': 2.5,
  'stores/postgres-durability': 2.5,
  'cli/outbox-cli': 2.5,
  'server/json-properties': 2.5,
  'server/hostile/callers': 2,
  'server/postgres-shutdown': 2,
  'cli/usage-errors': 2,
  'e2e/serve-shutdown-race': 2,
  'server/edge-log': 2,
  'lab/hook-lab': 2,
  'stores/sqlite': 2,
  'stores/sqlite-store': 2,
  'http/adapter-suite': 1.5,
  'journal/postgres-journal': 1.5,
  'server/shutdown': 1.5,
  'server/listing-limit': 1,
  'server/server': 1,
  'server/hook-ledger': 1,
  'sim/sim-cli': 1,
  'sim/batch': 1,
  'sim/run-world': 1,
};
const QUICK_SECONDS = 0.3;
/**
 * A file this long gets a process of its own; shorter ones share processes of about this long.
 * Each process loads its own copy of the modules under test, so fewer processes cost less CPU
 * time: 12 measured fewer CPU-seconds than 6, and 24 with neighbours packed together fewer again
 * (the browser files' process stays the longest).
 */
const PROCESS_SECONDS = 24;
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
const seconds = (file) => SECONDS[name(file)] ?? QUICK_SECONDS;
const usesBrowser = (file) => readFileSync(file, 'utf8').includes('/browser-env.js');

const groupDir = mkdtempSync(join(tmpdir(), 'oncely-test-groups-'));
/**
 * One file for `node --test` that runs `members` in turn, each in a describe of its own. A member
 * is imported only once the one before it has finished, hooks included, so its top-level code
 * (a database probe, a server) runs alone as it would in a process of its own. node:test finds
 * the suite a test belongs to from the async context: the import runs in the describe's. A member
 * may leave a clean-up to the group's end (the shared browser: test/web/browser-env.ts).
 */
const GROUP_HEAD = `import { executionAsyncResource } from 'node:async_hooks';
import { after, describe } from 'node:test';

// What the members leave to the end of the whole group (one Chromium for all of them).
const atGroupEnd = [];
globalThis[Symbol.for('oncely.test.atGroupEnd')] = atGroupEnd;
after(async () => {
  for (const cleanUp of atGroupEnd) await cleanUp();
});

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
  members = [...members].sort();
  const path = join(groupDir, `group-${readdirSync(groupDir).length + 1}.test.mjs`);
  const list = members.map((file) => [file, pathToFileURL(resolve(file)).href]);
  writeFileSync(path, `const MEMBERS = ${JSON.stringify(list, null, 2)};\n${GROUP_HEAD}`);
  return path;
}

// The browser files share a process; a long file has one of its own; the rest fill processes of
// about PROCESS_SECONDS in path order, so that a directory's files, which mostly load the same
// modules, load them once. Then the processes start longest first.
const runs = [];
const browser = files.filter(usesBrowser);
if (browser.length > 0) runs.push(browser);
let filling;
for (const file of files.filter((f) => !usesBrowser(f))) {
  if (seconds(file) >= PROCESS_SECONDS) {
    runs.push([file]);
  } else if (filling && total(filling) + seconds(file) <= PROCESS_SECONDS) {
    filling.push(file);
  } else {
    filling = [file];
    runs.push(filling);
  }
}
runs.sort((a, b) => total(b) - total(a));

function total(members) {
  return members.reduce((sum, file) => sum + seconds(file), 0);
}

const result = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-reporter=spec', ...runs.map(group)],
  { stdio: 'inherit' },
);
rmSync(groupDir, { recursive: true, force: true });
process.exit(result.status ?? 1);
