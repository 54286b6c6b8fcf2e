/**
 * The simulator's throughput, in outcomes (one rule on one world) per second:
 *   1. the ten-setting batch (640 worlds, 3,840 outcomes) on one thread, traces off, and the same
 *      worlds with traces on (what the batch avoids);
 *   2. a batch 100x larger (64,000 worlds) on one thread, then split over worker_threads on every
 *      core, with the speed-up and a check that both give the same totals.
 *
 *   npm run build && node dist/bench/sim.js [--scale 100] [--rounds 5] [--big-rounds 3]
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import {
  BATCH_SETTINGS,
  DEFAULT_BATCH,
  METRIC_NAMES,
  RULES,
  runBatch,
  runWorld,
  type MeansRow,
} from '#cli/sim/index.js';
import { exitOnBadArgs, readBenchArgs } from './bench-args.js';
import type { ShardRequest } from './sim-worker.js';

const USAGE = `usage: node dist/bench/sim.js [options]
  the simulator's throughput in outcomes per second: the ten-setting batch on one thread (traces
  off and on), then a batch --scale times larger on one thread and over worker threads.
  --scale N        how many times larger the big batch is (default 100)
  --rounds N       rounds of the ten-setting batch; the median is kept (default 5)
  --big-rounds N   rounds of the big batch (default 3)
  --help           this text`;

const { values } = readBenchArgs('sim', USAGE, {
  options: {
    scale: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    'big-rounds': { type: 'string', default: '3' },
    help: { type: 'boolean' },
  },
});
const wholeArg = (name: string, text: string): number => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    exitOnBadArgs('sim', `--${name} must be a whole number >= 1, got ${text}`);
  return n;
};
const scale = wholeArg('scale', values.scale);
const rounds = wholeArg('rounds', values.rounds);
const bigRounds = wholeArg('big-rounds', values['big-rounds']);

function timed<T>(run: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = run();
  return { value, ms: performance.now() - started };
}

/** The best of `rounds` runs after one warm-up: the least disturbed by other work on the machine. */
function bestOf(run: () => number): { outcomes: number; ms: number } {
  run();
  let best = Number.POSITIVE_INFINITY;
  let outcomes = 0;
  for (let r = 0; r < rounds; r++) {
    const t = timed(run);
    outcomes = t.value;
    best = Math.min(best, t.ms);
  }
  return { outcomes, ms: best };
}

const perSecond = (outcomes: number, ms: number): string =>
  Math.round((outcomes / ms) * 1000).toLocaleString('en-US');

/** Sums of every metric over every outcome, to check that two runs saw the same worlds. */
function totals(rows: readonly MeansRow[]): string {
  const sums = METRIC_NAMES.map((name) =>
    rows.reduce((n, row) => n + Math.round(row.mean[name] * row.worlds), 0),
  );
  return METRIC_NAMES.map((name, i) => `${name} ${sums[i]}`).join(', ');
}

function mergeMeans(parts: readonly (readonly MeansRow[])[]): MeansRow[] {
  const merged = new Map<string, { row: MeansRow; sum: Record<string, number>; worlds: number }>();
  for (const rows of parts) {
    for (const row of rows) {
      const key = `${row.setting}/${row.rule}`;
      const cell = merged.get(key) ?? {
        row,
        sum: Object.fromEntries(METRIC_NAMES.map((n) => [n, 0])),
        worlds: 0,
      };
      for (const name of METRIC_NAMES) cell.sum[name]! += row.mean[name] * row.worlds;
      cell.worlds += row.worlds;
      merged.set(key, cell);
    }
  }
  return [...merged.values()].map(({ row, sum, worlds }) => ({
    ...row,
    worlds,
    mean: Object.fromEntries(METRIC_NAMES.map((n) => [n, sum[n]! / worlds])) as MeansRow['mean'],
  }));
}

function runShard(request: ShardRequest): Promise<{ outcomeCount: number; means: MeansRow[] }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./sim-worker.js', import.meta.url), { workerData: request });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const batchSeeds = DEFAULT_BATCH.seeds;
console.log(
  `oncely sim bench: ${BATCH_SETTINGS.length} settings x ${RULES.length} rules, Node ${process.version}, ${availableParallelism()} cores`,
);

// 1. The ten-setting batch, one thread.
const plain = bestOf(() => runBatch({ seeds: batchSeeds, keepOutcomes: false }).outcomeCount);
const traced = bestOf(() => {
  let n = 0;
  for (const setting of BATCH_SETTINGS) {
    for (let seed = 0; seed < batchSeeds; seed++) {
      const params = { ...setting.overrides, seed };
      for (const rule of RULES) {
        runWorld(params, rule, { trace: true });
        n++;
      }
    }
  }
  return n;
});
console.log(
  `\n1. ten-setting batch (${batchSeeds} seeds, ${plain.outcomes.toLocaleString('en-US')} outcomes), one thread, best of ${rounds}`,
);
console.log(
  `   runBatch, no traces       ${plain.ms.toFixed(1).padStart(8)} ms  ${perSecond(plain.outcomes, plain.ms).padStart(10)} outcomes/s`,
);
console.log(
  `   runWorld one by one, traced ${traced.ms.toFixed(1).padStart(6)} ms  ${perSecond(traced.outcomes, traced.ms).padStart(10)} outcomes/s`,
);
console.log(
  `   ratio: the batch is ${(traced.ms / plain.ms).toFixed(2)}x as fast as traced single runs`,
);

// 2. A batch `scale` times larger: one thread, then one worker per core. The machine may be
// shared, so the two runs alternate and each keeps its best of `bigRounds`.
const bigSeeds = batchSeeds * scale;
const threads = Math.max(1, availableParallelism());
const share = Math.ceil(bigSeeds / threads);
const shards: ShardRequest[] = [];
for (let first = 0; first < bigSeeds; first += share)
  shards.push({ firstSeed: first, seeds: Math.min(share, bigSeeds - first) });
let serialMs = Number.POSITIVE_INFINITY;
let parallelMs = Number.POSITIVE_INFINITY;
let serialResult = runBatch({ seeds: 1, keepOutcomes: false });
let parts: { outcomeCount: number; means: MeansRow[] }[] = [];
for (let r = 0; r < bigRounds; r++) {
  const serial = timed(() => runBatch({ seeds: bigSeeds, keepOutcomes: false }));
  serialMs = Math.min(serialMs, serial.ms);
  serialResult = serial.value;
  const parallelStarted = performance.now();
  parts = await Promise.all(shards.map(runShard));
  parallelMs = Math.min(parallelMs, performance.now() - parallelStarted);
}
const parallelOutcomes = parts.reduce((n, part) => n + part.outcomeCount, 0);
const same = totals(serialResult.means) === totals(mergeMeans(parts.map((part) => part.means)));

console.log(
  `\n2. batch ${scale}x larger (${bigSeeds.toLocaleString('en-US')} seeds, ${serialResult.worlds.toLocaleString('en-US')} worlds, ${serialResult.outcomeCount.toLocaleString('en-US')} outcomes), best of ${bigRounds}`,
);
console.log(
  `   one thread                ${serialMs.toFixed(0).padStart(8)} ms  ${perSecond(serialResult.outcomeCount, serialMs).padStart(10)} outcomes/s`,
);
console.log(
  `   ${shards.length} worker_threads          ${parallelMs.toFixed(0).padStart(8)} ms  ${perSecond(parallelOutcomes, parallelMs).padStart(10)} outcomes/s  (worker start-up included)`,
);
console.log(
  `   speed-up: ${(serialMs / parallelMs).toFixed(2)}x on ${shards.length} threads; same totals as one thread: ${same ? 'yes' : 'NO'}`,
);
if (!same) process.exitCode = 1;
