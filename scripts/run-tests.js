#!/usr/bin/env node
// Runs every compiled test file under dist/test with node's own test runner.
//   node scripts/run-tests.js [filter…]   the files whose path contains one of the filters (all by default)
// Node 20 has no glob support in `node --test`, so we list the files ourselves. It also starts a
// process per file, and starting one (node, the runner, the modules under test) costs about what a
// quick file's tests do. So a few worker processes run all the files, each file inside a describe
// named after it (its before/after hooks stay its own), one file at a time per worker. A worker
// takes the next file nobody has taken from one list, longest first, so the long files start first
// and a worker that finishes early takes more, whatever the machine's load: none ends long after
// the rest. The browser files (those importing test/web/browser-env.ts) are one entry, run in turn
// by one worker in one Chromium: as entries of their own, each worker launched a Chromium of its
// own, about 1.5 CPU-seconds each, and the suite is bound by CPU on 2 cores, not by its longest
// entry (about 22 s of the hints below, started early).
// ONCELY_TEST_CONCURRENCY sets how many workers run at once. ONCELY_TEST_TIMES=N prints, at the
// end, the N slowest files with when each started and ended (to keep the SECONDS hints right).
import {
  existsSync,
  mkdirSync,
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
 * 2-core machine: the order in which the workers take them (longest first), never a result (a
 * file missing here counts as QUICK_SECONDS; a wrong figure costs time only: a long file taken
 * last ends the run alone). Add a new file that takes seconds; `ONCELY_TEST_TIMES=60 npm test`
 * prints the figures of a run (these: the mean of two full runs under the lock, on a machine
 * others were loading too).
 */
const SECONDS = {
  'http/express-prisma-example': 48,
  'bench/chaos': 35,
  'stores/orm-crash': 33,
  'stores/orm-conformance': 32,
  'bench/outbox': 28,
  'journal/postgres-journal': 21,
  'stores/orm-race': 21,
  'package/pack-install': 20,
  'bench/orm': 19,
  'bench/steps-chaos': 19,
  'journal/postgres-fanout-workers': 18,
  'steps/orm-steps': 17,
  'stores/orm-deferred': 17,
  'docs/examples': 16,
  'public-surface': 15,
  'steps/steps-crash': 13,
  'http/nextjs-route': 10,
  'package/library-imports': 10,
  'apps/lab/checkout-lab': 9,
  'package/prepare': 8,
  'apps/serve/store-view': 7,
  'journal/sqlite-journal': 7,
  'stores/crash': 7,
  'apps/cli/outbox-cli': 6,
  'journal/outbox-crash': 6,
  'stores/postgres': 6,
  'web/layout': 6,
  'web/page': 6,
  'apps/outbox-api/outbox-api-endpoints': 5,
  'bench/anchors': 5,
  'e2e/serve-shutdown': 5,
  'journal/postgres-two-workers': 5,
  'apps/sim/fleet-cli': 4.5,
  'http/deferred-writes': 4.5,
  'stores/orm-outbox': 4.5,
  'apps/receivers/notes': 4,
  'stores/postgres-durability': 4,
  'http/adapter-suite': 3.5,
  'stores/bounded-sweep': 3.5,
  'apps/outbox-api/outbox-api-messages': 3,
  'apps/outbox-api/outbox-api-publish-event': 3,
  'http/nestjs': 3,
  'journal/memory-journal': 3,
  'steps/postgres-steps': 3,
  'web/outbox-endpoints-page': 3,
  'web/outbox-page': 3,
  'apps/cli/stdout-closed': 2.5,
  'apps/cli/usage-errors': 2.5,
  'apps/outbox-api/openapi': 2.5,
  'apps/outbox-ui/outbox-api': 2.5,
  'apps/sim/fleet-budget': 2.5,
  'e2e/serve-deliver': 2.5,
  'stores/postgres-partitions': 2.5,
  'web/checkout-page': 2.5,
  'apps/serve/edge-log': 2,
  'apps/serve/hostile/edge': 2,
  'apps/serve/hostile/slow': 2,
  'design/commit-subjects': 2,
  'design/lint': 2,
  'http/race': 2,
  'apps/cli/serve-config': 1.5,
  'apps/outbox-api/outbox-metrics': 1.5,
  'apps/serve/bad-input': 1.5,
  'apps/serve/hostile/callers': 1.5,
  'apps/serve/hostile/json': 1.5,
  'apps/serve/json-properties': 1.5,
  'bench/bench-args': 1.5,
  'client/fetch-sockets': 1.5,
  'e2e/serve-shutdown-race': 1.5,
  'http/key-header-draft': 1.5,
  'stores/sqlite': 1.5,
  'web/fleet-page': 1.5,
  'apps/cli/ledger-compact': 1,
  'apps/cli/outbox-replay': 1,
  'apps/serve/hook-ledger': 1,
  'apps/serve/notify-outbox': 1,
  'apps/serve/postgres-shutdown': 1,
  'apps/serve/server': 1,
  'apps/serve/shutdown': 1,
  'apps/sim/fleet-models': 1,
  'stores/sqlite-store': 1,
  'apps/lab/hook-lab': 0.5,
  'apps/serve/listing-limit': 0.5,
  'apps/sim/batch': 0.5,
  'apps/sim/run-world': 0.5,
  'apps/sim/sim-cli': 0.5,
};
const QUICK_SECONDS = 0.3;
/** The workers: the cores, and one more, as many files wait on a database or a browser. */
const CONCURRENCY = Number(process.env['ONCELY_TEST_CONCURRENCY'] ?? 3);

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
// tsc never deletes output: a test whose source was moved or removed leaves a stale .js behind.
const hasSource = (file) => existsSync(file.replace(/^dist[\\/]/, '').replace(/\.js$/, '.ts'));
const files = findTests('dist/test')
  .filter(hasSource)
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error(
    `no test files found${filters.length > 0 ? ` matching ${filters.join(' or ')}` : ''}`,
  );
  process.exit(1);
}

const name = (file) => relative(join('dist', 'test'), file).replace(/\.test\.js$/, '');
const seconds = (file) => SECONDS[name(file)] ?? QUICK_SECONDS;

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
const workDir = mkdtempSync(join(scratch, 'workers-'));
/** Where the workers claim the list's files: a file's number, created by whoever takes it. */
const claimDir = join(workDir, 'claims');
mkdirSync(claimDir);
/** Where the workers log each file's start and end (ms since the epoch), a JSON line each. */
const timesLog = join(workDir, 'times.jsonl');

/**
 * One worker, a file for `node --test`: it claims the first entry of ENTRIES nobody has claimed
 * (creating a file is atomic: one worker wins it), runs each of its files in a describe of its
 * own, then claims the next. A file is imported only once the one before it has finished,
 * hooks included, so its top-level code (a database probe, a server) runs alone in the worker as
 * it would in a process of its own. node:test finds the suite a test belongs to from the async
 * context: the import runs in the describe's, and the next describe is registered from a scope
 * of no test's, so it belongs to the file's root. A file may leave a clean-up to the worker's
 * end (the shared browser: test/web/browser-env.ts).
 */
const WORKER = `import { AsyncResource, executionAsyncResource } from 'node:async_hooks';
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe } from 'node:test';

/** CPU ms this worker and its ended children used so far (Linux; elsewhere the worker's own). */
function cpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // utime, stime, cutime, cstime: fields 14 to 17, in ticks of (nearly always) 10 ms.
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * 10;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

// What the files leave to the end of the whole worker (one Chromium for all its browser files).
const atGroupEnd = [];
globalThis[Symbol.for('oncely.test.atGroupEnd')] = atGroupEnd;
after(async () => {
  for (const cleanUp of atGroupEnd) await cleanUp();
});

let cursor = 0;
/** The files of the next entry nobody has claimed, or none when all are. */
function claim() {
  while (cursor < ENTRIES.length) {
    const index = cursor++;
    try {
      closeSync(openSync(join(CLAIMS, String(index)), 'wx'));
      return ENTRIES[index];
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
  return [];
}

const outside = new AsyncResource('oncely-test-worker');
let claimed = [];
function next() {
  if (claimed.length === 0) claimed = [...claim()];
  const file = claimed.shift();
  if (!file) return;
  const [name, url] = file;
  describe(name, async () => {
    const suite = executionAsyncResource();
    const started = Date.now();
    const cpuAtStart = cpuMs();
    let done = false;
    const finished = () => {
      if (!done) {
        // One line per file, appended whole: the workers share the log.
        const line = [name, started, Date.now(), cpuMs() - cpuAtStart];
        appendFileSync(TIMES, JSON.stringify(line) + '\\n');
        outside.runInAsyncScope(next);
      }
      done = true;
    };
    try {
      await suite.runInAsyncScope(() => import(url));
    } catch (error) {
      finished();
      throw error;
    }
    suite.runInAsyncScope(() => after(finished));
  });
}
outside.runInAsyncScope(next);
`;
function worker(number, entries) {
  // Numbered with zeros in front: node --test sorts the files it is given.
  const path = join(workDir, `worker-${String(number).padStart(3, '0')}.test.mjs`);
  const named = entries.map((entry) =>
    entry.map((file) => [file, pathToFileURL(resolve(file)).href]),
  );
  writeFileSync(
    path,
    `const CLAIMS = ${JSON.stringify(claimDir)};\nconst TIMES = ${JSON.stringify(timesLog)};\nconst ENTRIES = ${JSON.stringify(named, null, 2)};\n${WORKER}`,
  );
  return path;
}

// The entries: the browser files together, every other file alone.
const usesBrowser = (file) => readFileSync(file, 'utf8').includes('/browser-env.js');
const browserFiles = files.filter(usesBrowser);
const entries = [
  ...(browserFiles.length > 0 ? [browserFiles] : []),
  ...files.filter((file) => !browserFiles.includes(file)).map((file) => [file]),
];
const entrySeconds = (entry) => entry.reduce((sum, file) => sum + seconds(file), 0);
// The list: longest first (in path order among alike, so that a directory's quick files, which
// mostly load the same modules, tend to follow each other in a worker).
const longestFirst = [...entries].sort((a, b) => entrySeconds(b) - entrySeconds(a));
const totalSeconds = files.reduce((sum, file) => sum + seconds(file), 0);

// A worker for less than a few seconds of tests costs more to start than it saves (a filtered run).
const workers = Math.max(1, Math.min(CONCURRENCY, entries.length, Math.round(totalSeconds / 4)));
const testFiles =
  files.length === 1
    ? files
    : Array.from({ length: workers }, (_, i) => worker(i + 1, longestFirst));

const result = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${workers}`, '--test-reporter=spec', ...testFiles],
  { stdio: 'inherit', env: { ...process.env, TMPDIR: scratch } },
);
const slowest = Number(process.env['ONCELY_TEST_TIMES'] ?? 0);
if (slowest > 0 && existsSync(timesLog)) printSlowest(slowest);
rmSync(scratch, { recursive: true, force: true });
process.exit(result.status ?? 1);

/**
 * The `count` slowest files of this run: seconds taken, started and ended (s from the start), and
 * the CPU-seconds they and the processes they started and waited for used.
 */
function printSlowest(count) {
  const runs = readFileSync(timesLog, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const start = Math.min(...runs.map(([, started]) => started));
  const s = (ms) => (ms / 1000).toFixed(1).padStart(6);
  console.log(
    `# the ${count} slowest files: seconds, started, ended (from the first start), CPU-s`,
  );
  for (const [file, started, ended, cpu] of runs
    .sort((a, b) => b[2] - b[1] - (a[2] - a[1]))
    .slice(0, count))
    console.log(
      `# ${s(ended - started)} ${s(started - start)} ${s(ended - start)} ${s(cpu)}  ${name(file)}`,
    );
  const cpu = runs.reduce((sum, run) => sum + run[3], 0);
  console.log(`# all ${runs.length} files: ${s(cpu)} CPU-s`);
}
