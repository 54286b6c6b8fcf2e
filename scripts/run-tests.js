#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's own test runner.
//   node scripts/run-tests.js [filter]   the files whose path contains filter (all by default)
// Node 20 has no glob support in `node --test`, so we list the files ourselves. It also starts a
// process per file, and starting one (node, the runner, the modules under test) costs about what a
// quick file's tests do. So files share processes, each file inside a describe named after it (its
// before/after hooks stay its own): neighbours in path order, which load the same modules, share
// one of PROCESSES about alike; a long file has a process of its own; the browser files share one
// (and one Chromium: test/web/browser-env.ts). The longest start first, so none starts last.
// ONCELY_TEST_CONCURRENCY sets how many processes run at once.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
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
  'docs/examples': 8,
  'package/pack-install': 11,
  'web/layout': 7,
  'web/page': 6,
  'journal/postgres-two-workers': 5,
  'journal/outbox-crash': 5,
  'server/store-view': 5,
  'stores/postgres': 4,
  'design/lint': 3.5,
  'bench/anchors': 3,
  'e2e/serve-shutdown': 3,
  'sim/fleet-cli': 2.5,
  'services/notes': 2.5,
  'server/hostile/slow': 2,
  'server/hostile/edge': 2,
  'stores/crash': 2,
  'http/race': 2,
  'server/edge-log': 2,
  'stores/bounded-sweep': 2,
  'web/fleet-page': 1.5,
  'client/fetch-sockets': 1.5,
  'stores/sqlite': 1.5,
  'server/hostile/callers': 1.5,
  'stores/postgres-partitions': 1.5,
  'server/bad-input': 1.5,
  'e2e/serve-deliver': 1.5,
  'cli/serve-config': 1.5,
  'server/json-properties': 1.5,
  'server/hostile/json': 1.5,
  'cli/usage-errors': 1.5,
  'e2e/serve-shutdown-race': 1.5,
  'stores/postgres-durability': 1,
  'server/shutdown': 1,
  'sim/fleet-models': 1,
  'server/server': 1,
  'server/postgres-shutdown': 1,
  'server/notify-outbox': 1,
  'cli/outbox-cli': 1,
  'stores/sqlite-store': 1,
  'http/adapter-suite': 1,
  'server/hook-ledger': 1,
  'cli/ledger-compact': 1,
  'sim/sim-cli': 0.5,
  'sim/batch': 0.5,
  'sim/run-world': 0.5,
  'lab/hook-lab': 0.5,
  'journal/postgres-journal': 0.5,
  'server/listing-limit': 0.5,
};
const QUICK_SECONDS = 0.3;
/** The processes at once: the cores, and one more, as many files wait on a database or a browser. */
const CONCURRENCY = Number(process.env['ONCELY_TEST_CONCURRENCY'] ?? 3);
/**
 * How many processes: each loads its own copy of the modules under test, so fewer cost less CPU
 * time, but with fewer than two rounds of CONCURRENCY the run ends with one process alone, and
 * with a count that is not a multiple of it, the last round is a part round (7 processes of
 * about 20 s on 3 ran about 60 s; 6 run about 45).
 */
const PROCESSES = 2 * CONCURRENCY;

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

/**
 * Where the tests' scratch files go (their TMPDIR): a directory in memory when there is room, as
 * their databases, journals and copies are thrown away at the end and none of them tests a disk;
 * each SQLite commit's fsync on the disk cost the suite about a second of system time and more of
 * waiting. Removed at the end, with whatever a failed test left. ONCELY_TEST_TMPDIR chooses.
 */
function scratchRoot() {
  const chosen = process.env['ONCELY_TEST_TMPDIR'];
  if (chosen) return chosen;
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    if (bavail * bsize >= 2 * 1024 ** 3) return '/dev/shm';
  } catch {
    // no /dev/shm (not Linux): the system's temporary directory
  }
  return tmpdir();
}
const scratch = mkdtempSync(join(scratchRoot(), 'oncely-test-'));
const groupDir = mkdtempSync(join(scratch, 'groups-'));
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
  // Numbered with zeros in front: node --test sorts the files it is given, and group-10 would
  // start before group-2.
  const number = String(readdirSync(groupDir).length + 1).padStart(3, '0');
  const path = join(groupDir, `group-${number}.test.mjs`);
  const list = members.map((file) => [file, pathToFileURL(resolve(file)).href]);
  writeFileSync(path, `const MEMBERS = ${JSON.stringify(list, null, 2)};\n${GROUP_HEAD}`);
  return path;
}

// The browser files share a process; the rest fill the others, PROCESSES in all, about alike in
// seconds, in path order, so that a directory's files, which mostly load the same modules, load
// them once; a file longer than that share has a process of its own. Then the processes start
// longest first.
const runs = [];
const browser = files.filter(usesBrowser);
if (browser.length > 0) runs.push(browser);
const rest = files.filter((f) => !usesBrowser(f));
// A process for less than a few seconds of tests costs more to start than it saves (a filtered run).
const share = Math.max(4, total(rest) / Math.max(1, PROCESSES - runs.length));
let filling;
for (const file of rest) {
  const filled = filling ? total(filling) : 0;
  if (seconds(file) >= share) {
    runs.push([file]);
  } else if (filling && Math.abs(filled + seconds(file) - share) <= Math.abs(filled - share)) {
    filling.push(file);
  } else {
    filling = [file];
    runs.push(filling);
  }
}
// A short remainder joins the process before it rather than start one of its own.
const last = runs.at(-1);
const before = runs.at(-2);
if (last === filling && before && before !== browser && total(last) < share / 4) {
  before.push(...runs.pop());
}
runs.sort((a, b) => total(b) - total(a));

function total(members) {
  return members.reduce((sum, file) => sum + seconds(file), 0);
}

const result = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-reporter=spec', ...runs.map(group)],
  { stdio: 'inherit', env: { ...process.env, TMPDIR: scratch } },
);
rmSync(scratch, { recursive: true, force: true });
process.exit(result.status ?? 1);
