/**
 * oncely's retry against the retry helpers a user would otherwise pick: p-retry@7 and
 * cockatiel@3, in one process, same operation, zero delays. oncely runs two ways: `createRetry`
 * (the policy resolved once, as a client does and as cockatiel's policy object is built once) and
 * `retry(op, options)` (resolved on every call). Two paths:
 *   - success: the first attempt succeeds (the overhead every call pays);
 *   - 3 failures: three retryable failures, then success (four attempts).
 * Rounds interleave the libraries in rotating order; each row prints the median ops/s, the spread
 * (min-max over rounds) and oncely's ratio to it, the median of the per-round ratios (> 1 means
 * oncely is faster). No durability is involved: everything is in memory.
 *
 *   npm run build && node dist/bench/client.js [--ms 300] [--rounds 5]
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pRetry from 'p-retry';
import { ConstantBackoff, handleAll, retry as cockatielRetry } from 'cockatiel';
import { createRetry, retry } from '../src/client/retry.js';

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

const ONCELY_OPTIONS = {
  maxAttempts: FAILURES_BEFORE_SUCCESS + 1,
  baseDelayMs: 0,
  maxDelayMs: 0,
  jitter: 'none',
} as const;
const oncelyPrepared = createRetry<number>(ONCELY_OPTIONS);
/**
 * Not a production setting: a clock that is never read for real, to show what the loop costs
 * without the two clock reads that time its report (Date.now() is ~50 ns on the 2-core VM).
 * cockatiel reads no clock unless a listener is attached.
 */
const frozenClock = { now: () => 0, sleep: () => Promise.resolve() };
const oncelyUntimed = createRetry<number>({ ...ONCELY_OPTIONS, clock: frozenClock });

/** Each library set to four attempts in all and zero delay, with its production defaults otherwise. */
export const RUNNERS: Record<string, Runner> = {
  oncely: (op) => oncelyPrepared(op),
  'oncely retry()': (op) => retry(op, ONCELY_OPTIONS),
  'oncely, no clock': (op) => oncelyUntimed(op),
  'p-retry@7': (op) =>
    pRetry(op, {
      retries: FAILURES_BEFORE_SUCCESS,
      minTimeout: 0,
      maxTimeout: 0,
      randomize: false,
    }),
  'cockatiel@3': (op) => cockatielPolicy.execute(op),
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

async function opsPerSecond(run: Runner, failures: number, durationMs: number): Promise<number> {
  let ops = 0;
  const started = performance.now();
  let now = started;
  while (now - started < durationMs) {
    await run(flaky(failures));
    ops += 1;
    if ((ops & 15) === 0 || failures > 0) now = performance.now();
  }
  return ops / ((performance.now() - started) / 1000);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export interface ClientBenchRow {
  readonly path: string;
  readonly library: string;
  /** Median over rounds. */
  readonly opsPerSecond: number;
  readonly minOpsPerSecond: number;
  readonly maxOpsPerSecond: number;
  /** Median over rounds of oncely's ops/s ÷ this library's in the same round (1 for oncely). */
  readonly oncelyRatio: number;
}

/** Runs every library on every path, `rounds` times in rotating order, and keeps the median. */
export async function runClientBench(
  options: { durationMs?: number; rounds?: number } = {},
): Promise<ClientBenchRow[]> {
  const durationMs = options.durationMs ?? 300;
  const rounds = options.rounds ?? 5;
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
  for (const [path, failures] of Object.entries(PATHS)) {
    const samples = new Map<string, number[]>(names.map((n) => [n, []]));
    for (const name of names) await opsPerSecond(RUNNERS[name]!, failures, durationMs / 4); // warm-up
    for (let round = 0; round < rounds; round++) {
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      for (const name of order)
        samples.get(name)!.push(await opsPerSecond(RUNNERS[name]!, failures, durationMs));
    }
    const oncely = samples.get('oncely')!;
    for (const name of names) {
      const own = samples.get(name)!;
      rows.push({
        path,
        library: name,
        opsPerSecond: median(own),
        minOpsPerSecond: Math.min(...own),
        maxOpsPerSecond: Math.max(...own),
        oncelyRatio: median(own.map((ops, round) => oncely[round]! / ops)),
      });
    }
  }
  return rows;
}

export function formatClientBench(rows: readonly ClientBenchRow[]): string {
  const lines = [
    'bench/client: retry helpers, zero delays, in memory; median ops/s over interleaved rounds, min-max spread,',
    'ratio = median of per-round oncely (createRetry) / other; > 1: oncely faster',
    '',
  ];
  const n = (v: number): string => Math.round(v).toLocaleString('en-US');
  lines.push(
    `${'path'.padEnd(12)}${'library'.padEnd(18)}${'ops/s'.padStart(12)}${'spread'.padStart(26)}   oncely ratio`,
  );
  for (const row of rows) {
    const ratio = row.library === 'oncely' ? '' : `${row.oncelyRatio.toFixed(2)}x`;
    const spread = `${n(row.minOpsPerSecond)}-${n(row.maxOpsPerSecond)}`;
    lines.push(
      `${row.path.padEnd(12)}${row.library.padEnd(18)}${n(row.opsPerSecond).padStart(12)}${spread.padStart(26)}   ${ratio}`,
    );
  }
  lines.push(
    '',
    'oncely: createRetry (policy resolved once, report built lazily, two clock reads per call to time it);',
    "oncely retry(): options resolved per call; oncely, no clock: a frozen clock, the loop's own cost.",
  );
  lines.push(
    'cockatiel waits with setTimeout even for a 0 ms backoff (at least ~1 ms in Node); p-retry and oncely skip the timer.',
  );
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : Number(process.argv[i + 1]);
  };
  const durationMs = arg('--ms');
  const rounds = arg('--rounds');
  const rows = await runClientBench({
    ...(durationMs ? { durationMs } : {}),
    ...(rounds ? { rounds } : {}),
  });
  process.stdout.write(formatClientBench(rows));
}
