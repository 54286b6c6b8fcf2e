/**
 * oncely's retry against the retry helpers a user would otherwise pick: p-retry@7 and
 * cockatiel@3, in one process, same operation, zero delays. oncely runs two ways: `createRetry`
 * (the policy resolved once, as a client does and as cockatiel's policy object is built once) and
 * `retry(op, options)` (resolved on every call). A bare loop (await, try/catch, no policy) is the
 * floor. Two paths:
 *   - success: the first attempt succeeds (the overhead every call pays);
 *   - 3 failures: three retryable failures, then success (four attempts).
 *
 * Rounds interleave the libraries in a shuffled order (seeded: the same on every run), each
 * timed sample after a short untimed one of the same library. Each sample runs for `--ms` of wall time and
 * counts both the wall time and this process's CPU time: CPU time is what a call costs, and it
 * barely moves when other processes share the cores; wall time also counts the waits a library
 * makes (cockatiel sleeps on a timer between attempts even for a 0 ms backoff). Each row prints
 * the median over rounds, the spread (min-max) and oncely's ratio to it, the median of the
 * per-round ratios (> 1 means oncely is faster). The success path also prints every round's
 * oncely ÷ cockatiel. No durability is involved: everything is in memory.
 *
 *   npm run build && node dist/bench/client.js [--ms 100] [--rounds 15]
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pRetry from 'p-retry';
import { ConstantBackoff, handleAll, retry as cockatielRetry } from 'cockatiel';
import { createRetry, retry } from 'oncely';
import { RetryTokenBucket } from 'oncely';
import { systemClock } from 'oncely';
import { seededRandom, type Random } from 'oncely';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';

type Operation = () => Promise<number>;
type Runner = (operation: Operation) => Promise<unknown>;

const FAILURES_BEFORE_SUCCESS = 3;

/** A failure every library retries: for oncely a transport error (an unknown outcome). */
function transientError(): Error {
  return Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

/** An operation that fails `failures` times, then succeeds; a fresh one per call. */
function flaky(failures: number): Operation {
  let calls = 0;
  return async () => {
    calls += 1;
    if (calls <= failures) throw transientError();
    return calls;
  };
}

const cockatielPolicy = cockatielRetry(handleAll, {
  maxAttempts: FAILURES_BEFORE_SUCCESS,
  backoff: new ConstantBackoff(0),
});

/**
 * cockatiel times an attempt only when a listener asks (its executor makes a stopwatch when
 * onSuccess or onFailure has one): this policy has both, as a caller who logs durations would.
 */
const cockatielTimedPolicy = cockatielRetry(handleAll, {
  maxAttempts: FAILURES_BEFORE_SUCCESS,
  backoff: new ConstantBackoff(0),
});
let durationSink = 0;
cockatielTimedPolicy.onSuccess(({ duration }) => (durationSink += duration));
cockatielTimedPolicy.onFailure(({ duration }) => (durationSink += duration));

const ONCELY_OPTIONS = {
  maxAttempts: FAILURES_BEFORE_SUCCESS + 1,
  baseDelayMs: 0,
  maxDelayMs: 0,
  jitter: 'none',
} as const;
const oncelyPrepared = createRetry<number>(ONCELY_OPTIONS);
const oncelyUntimed = createRetry<number>({ ...ONCELY_OPTIONS, timings: false });
/** With an in-process retry budget, never drained: what spending and refunding tokens costs. */
const oncelyBudgeted = createRetry<number>({
  ...ONCELY_OPTIONS,
  retryBudget: new RetryTokenBucket({ capacity: Number.MAX_SAFE_INTEGER }),
});

/** Each library set to four attempts in all and zero delay, with its production defaults otherwise. */
export const RUNNERS: Record<string, Runner> = {
  oncely: (op) => oncelyPrepared(op),
  'oncely untimed': (op) => oncelyUntimed(op),
  'oncely + bucket': (op) => oncelyBudgeted(op),
  'oncely retry()': (op) => retry(op, ONCELY_OPTIONS),
  'p-retry@7': (op) =>
    pRetry(op, {
      retries: FAILURES_BEFORE_SUCCESS,
      minTimeout: 0,
      maxTimeout: 0,
      randomize: false,
    }),
  'cockatiel@3': (op) => cockatielPolicy.execute(op),
  'cockatiel timed': (op) => cockatielTimedPolicy.execute(op),
  /** The floor: a bare loop with try/catch and no policy at all. Creating and throwing errors dominates the failure path. */
  'bare loop': async (op) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (error) {
        if (attempt > FAILURES_BEFORE_SUCCESS) throw error;
      }
    }
  },
};

export const PATHS = { success: 0, '3 failures': FAILURES_BEFORE_SUCCESS } as const;

/** One sample: calls per second of wall time and per second of this process's CPU time. */
interface Sample {
  readonly wall: number;
  readonly cpu: number;
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function sample(run: Runner, failures: number, durationMs: number): Promise<Sample> {
  let ops = 0;
  const cpuStarted = cpuSeconds();
  const started = performance.now();
  let now = started;
  while (now - started < durationMs) {
    await run(flaky(failures));
    ops += 1;
    if ((ops & 15) === 0 || failures > 0) now = performance.now();
  }
  const wallSeconds = (performance.now() - started) / 1000;
  return { wall: ops / wallSeconds, cpu: ops / (cpuSeconds() - cpuStarted) };
}

/**
 * What one read of oncely's real clock costs here, in ns of CPU: a first success reads it twice
 * (its attempt's start and end, which the report carries). Median of several short runs.
 */
function clockReadNs(): number {
  const reads = 200_000;
  const runs: number[] = [];
  let sink = 0;
  for (let run = 0; run < 7; run++) {
    const started = cpuSeconds();
    for (let i = 0; i < reads; i++) sink += systemClock.now() & 1;
    runs.push(((cpuSeconds() - started) * 1e9) / reads);
  }
  if (sink < 0) throw new Error('unreachable: keeps the loop from being optimised away');
  return median(runs);
}

/** A fresh order per round (Fisher-Yates on a seeded stream), the same on every run. */
function shuffled<T>(items: readonly T[], random: Random): T[] {
  const order = [...items];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export interface ClientBenchRow {
  readonly path: string;
  readonly library: string;
  /** Median over rounds, per second of wall time. */
  readonly opsPerSecond: number;
  /** Median over rounds, per second of CPU time; min and max over rounds. */
  readonly opsPerCpuSecond: number;
  readonly minOpsPerCpuSecond: number;
  readonly maxOpsPerCpuSecond: number;
  /** Median over rounds of oncely's rate ÷ this library's in the same round (1 for oncely). */
  readonly oncelyRatioCpu: number;
  readonly oncelyRatioWall: number;
  /** oncely ÷ this library, round by round, by CPU time. */
  readonly roundRatiosCpu: readonly number[];
}

/** oncely against cockatiel doing the same work on the success path, round by round. */
export interface LikeForLike {
  readonly label: string;
  readonly oncely: string;
  readonly other: string;
  /** oncely ÷ other by CPU time, one per round, and their median. */
  readonly roundRatiosCpu: readonly number[];
  readonly ratioCpu: number;
}

/**
 * The fair pairs: oncely times every attempt by default (the report carries each start and end,
 * two clock reads) and cockatiel times one only when a listener asks; each is set both ways.
 */
export const LIKE_FOR_LIKE = [
  { label: 'both time every attempt', oncely: 'oncely', other: 'cockatiel timed' },
  { label: 'neither times an attempt', oncely: 'oncely untimed', other: 'cockatiel@3' },
] as const;

export interface ClientBench {
  readonly rows: readonly ClientBenchRow[];
  readonly likeForLike: readonly LikeForLike[];
  readonly clockReadNs: number;
}

export const DEFAULT_CLIENT_BENCH = { durationMs: 100, rounds: 15 } as const;

/** Runs every library on every path, `rounds` times in shuffled order, and keeps the median. */
export async function runClientBench(
  options: { durationMs?: number; rounds?: number } = {},
): Promise<ClientBench> {
  const durationMs = options.durationMs ?? DEFAULT_CLIENT_BENCH.durationMs;
  const rounds = options.rounds ?? DEFAULT_CLIENT_BENCH.rounds;
  const names = Object.keys(RUNNERS);
  // Check first that every library really makes four attempts on the failure path.
  for (const name of names) {
    const value = await RUNNERS[name]!(flaky(FAILURES_BEFORE_SUCCESS));
    const attempts = name.startsWith('oncely') ? (value as { value: number }).value : value;
    if (attempts !== FAILURES_BEFORE_SUCCESS + 1)
      throw new Error(
        `${name} made ${String(attempts)} attempts, expected ${FAILURES_BEFORE_SUCCESS + 1}`,
      );
  }
  const rows: ClientBenchRow[] = [];
  const likeForLike: LikeForLike[] = [];
  for (const [path, failures] of Object.entries(PATHS)) {
    const samples = new Map<string, Sample[]>(names.map((n) => [n, []]));
    for (const name of names) await sample(RUNNERS[name]!, failures, durationMs / 2); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const name of shuffled(names, seededRandom(round))) {
        // Untimed, so that the garbage the previous library left is collected here, not on its
        // time: with a fixed rotation one library would always follow the same neighbour.
        await sample(RUNNERS[name]!, failures, durationMs / 4);
        samples.get(name)!.push(await sample(RUNNERS[name]!, failures, durationMs));
      }
    }
    const oncely = samples.get('oncely')!;
    for (const name of names) {
      const own = samples.get(name)!;
      const cpu = own.map((s) => s.cpu);
      const roundRatiosCpu = own.map((s, round) => oncely[round]!.cpu / s.cpu);
      rows.push({
        path,
        library: name,
        opsPerSecond: median(own.map((s) => s.wall)),
        opsPerCpuSecond: median(cpu),
        minOpsPerCpuSecond: Math.min(...cpu),
        maxOpsPerCpuSecond: Math.max(...cpu),
        oncelyRatioCpu: median(roundRatiosCpu),
        oncelyRatioWall: median(own.map((s, round) => oncely[round]!.wall / s.wall)),
        roundRatiosCpu,
      });
    }
    if (path !== 'success') continue;
    for (const pair of LIKE_FOR_LIKE) {
      const ours = samples.get(pair.oncely)!;
      const theirs = samples.get(pair.other)!;
      const roundRatiosCpu = ours.map((s, round) => s.cpu / theirs[round]!.cpu);
      likeForLike.push({ ...pair, roundRatiosCpu, ratioCpu: median(roundRatiosCpu) });
    }
  }
  return { rows, likeForLike, clockReadNs: clockReadNs() };
}

export function formatClientBench({ rows, likeForLike, clockReadNs: readNs }: ClientBench): string {
  const lines = [
    'bench/client: retry helpers, zero delays, in memory; medians over interleaved rounds.',
    'ops/CPU-s: calls per second of this process’s CPU time (what a call costs); ops/s: per second of wall time.',
    'ratio = median of per-round oncely (createRetry) ÷ other; > 1: oncely faster',
    '',
  ];
  const n = (v: number): string => Math.round(v).toLocaleString('en-US');
  lines.push(
    `${'path'.padEnd(12)}${'library'.padEnd(16)}${'ops/CPU-s'.padStart(12)}${'spread (CPU)'.padStart(26)}${'ops/s'.padStart(12)}   ratio CPU  wall`,
  );
  for (const row of rows) {
    const ratio =
      row.library === 'oncely'
        ? ''
        : `${row.oncelyRatioCpu.toFixed(2)}x`.padStart(9) +
          `${row.oncelyRatioWall.toFixed(2)}x`.padStart(7);
    const spread = `${n(row.minOpsPerCpuSecond)}-${n(row.maxOpsPerCpuSecond)}`;
    lines.push(
      `${row.path.padEnd(12)}${row.library.padEnd(16)}${n(row.opsPerCpuSecond).padStart(12)}${spread.padStart(26)}${n(row.opsPerSecond).padStart(12)}   ${ratio}`,
    );
  }
  lines.push('', 'success, like for like (CPU), oncely ÷ cockatiel by round:');
  for (const pair of likeForLike) {
    lines.push(
      `  ${pair.label}: ${pair.oncely} ÷ ${pair.other}: ${pair.roundRatiosCpu.map((r) => r.toFixed(2)).join(' ')}; median ${pair.ratioCpu.toFixed(2)}x`,
    );
  }
  const oncely = rows.find((r) => r.path === 'success' && r.library === 'oncely');
  if (oncely) {
    lines.push(
      `one read of oncely's clock (Date.now) costs ${readNs.toFixed(0)} ns here; a timed first success reads it twice (its start and end, in the report): ${(((2 * readNs * oncely.opsPerCpuSecond) / 1e9) * 100).toFixed(0)}% of its CPU time.`,
    );
  }
  lines.push(
    '',
    'oncely: createRetry (policy resolved once, report built lazily, every attempt timed); oncely untimed: the same with timings: false;',
    'oncely retry(): options resolved per call. cockatiel timed: onSuccess and onFailure listeners, so it times each attempt.',
    'cockatiel waits with setTimeout even for a 0 ms backoff (at least ~1 ms in Node); p-retry and oncely skip the timer.',
  );
  return `${lines.join('\n')}\n`;
}

const USAGE = `usage: node dist/bench/client.js [--ms N] [--rounds N]
  oncely's retry against p-retry and cockatiel in one process, zero delays, in memory: a first
  success and three failures then a success; ops per CPU-second, medians over interleaved rounds.
  --ms N       length of each measured run, in ms (default ${DEFAULT_CLIENT_BENCH.durationMs})
  --rounds N   rounds, variants interleaved in each (default ${DEFAULT_CLIENT_BENCH.rounds})
  --help       this text`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = readBenchArgs('client', USAGE, {
    options: { ms: { type: 'string' }, rounds: { type: 'string' }, help: { type: 'boolean' } },
  });

  const result = await runClientBench({
    durationMs: wholeArgOrExit('client', 'ms', values.ms, DEFAULT_CLIENT_BENCH.durationMs),
    rounds: wholeArgOrExit('client', 'rounds', values.rounds, DEFAULT_CLIENT_BENCH.rounds),
  });
  process.stdout.write(formatClientBench(result));
}
