/**
 * bench/chaos's run: the system started, intents recorded in the PostgreSQL journal as an
 * application would (chaos-producer.ts: acknowledged at COMMIT), faults injected one after another
 * on a seeded plan spread over the intents, then everything drained and checked from the
 * databases. Used by bench/chaos.ts (the long run) and test/bench/chaos.test.ts (the short one).
 */
import { seededRandom, type Random } from 'oncely';
import {
  FAULT_KINDS,
  injectFault,
  type FaultKind,
  type FaultResult,
  type FaultTiming,
} from './chaos-faults.js';
import { startProducer } from './chaos-producer.js';
import { startChaosSystem, type ChaosSystem } from './chaos-system.js';
import { pendingIntents, verify, type Verdict } from './chaos-verify.js';

export interface ChaosOptions {
  readonly intents: number;
  readonly seed: number;
  readonly faults: readonly FaultKind[];
  /** Times each fault kind is injected. */
  readonly each: number;
  /** No intent is recorded and no fault injected after this long; undefined: no limit. */
  readonly minutes: number | undefined;
  readonly timing: FaultTiming;
  /** The harness's broken receiver (the effect written outside the ledger's transaction). */
  readonly effectOutsideTransaction: boolean;
  readonly binDir: string;
  readonly onProgress?: (line: string) => void;
}

export interface ChaosResult {
  /** Intents the journal acknowledged. */
  readonly intents: number;
  readonly elapsedMs: number;
  readonly faults: readonly FaultResult[];
  /** The fault plan's index active when each acknowledged intent was recorded (-1: before any). */
  readonly phaseOf: ReadonlyMap<string, number>;
  readonly verdict: Verdict;
  /** Empty when every invariant held and every fault was survived. */
  readonly failures: readonly string[];
  /** The 5xx answers but 503 the receivers gave (a receiver must answer 503 to an outage). */
  readonly serverErrors: readonly string[];
  /** The last lines the children wrote on stderr (crash reports), for a failed run. */
  readonly childStderr: readonly string[];
  /** CPU time used: this process and its children (receivers, workers, initdb), and PostgreSQL. */
  readonly cpu: { readonly harnessCpuMs: number; readonly postgresCpuMs: number };
}

const DRAIN_LIMIT_MS = 120_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Every kind `each` times, in a seeded order. */
export function faultPlan(kinds: readonly FaultKind[], each: number, random: Random): FaultKind[] {
  const plan = Array.from({ length: each }, () => [...kinds]).flat();
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  return plan;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const stderrLines: string[] = [];
  /** The receivers' 5xx answers other than 503, as they report them. */
  const serverErrors: string[] = [];
  let current = (): string => 'setup';
  const setupFrom = performance.now();
  const system = await startChaosSystem({
    binDir: options.binDir,
    seed: options.seed,
    effectOutsideTransaction: options.effectOutsideTransaction,
    onStderr: (name, line) => {
      if (process.env.CHAOS_DEBUG) console.error(`${name}: ${line}`);
      stderrLines.push(`${name}: ${line}`);
      if (stderrLines.length > 40) stderrLines.shift();
    },
    onStdout: (name, line) => {
      if (line.startsWith('answered ')) serverErrors.push(`${name} ${line} (during ${current()})`);
    },
  });
  options.onProgress?.(`chaos: system up in ${(performance.now() - setupFrom).toFixed(0)} ms`);
  let driven: Awaited<ReturnType<typeof drive>>;
  try {
    driven = await drive(system, options, (latest) => {
      current = latest;
    });
  } catch (error) {
    await system.teardown();
    throw error;
  }
  const teardownFrom = performance.now();
  const cpu = await system.teardown();
  options.onProgress?.(`chaos: torn down in ${(performance.now() - teardownFrom).toFixed(0)} ms`);
  const failures = [...driven.failures, ...serverErrors.map((line) => `5xx: ${line}`)];
  return { ...driven, failures, serverErrors, childStderr: stderrLines, cpu };
}

async function drive(
  system: ChaosSystem,
  options: ChaosOptions,
  /** Hands over a function naming the latest fault, for the children's reports. */
  onPhase: (latest: () => string) => void,
): Promise<Omit<ChaosResult, 'childStderr' | 'cpu' | 'serverErrors'>> {
  const random = seededRandom(options.seed);
  const plan = faultPlan(options.faults, options.each, random);
  const startedAt = performance.now();
  const endsAt = options.minutes === undefined ? Infinity : startedAt + options.minutes * 60_000;
  const faults: FaultResult[] = [];
  const share = options.intents / (plan.length + 1);
  const app = startProducer(system, { intents: options.intents, seed: options.seed, endsAt });
  app.ceiling = share;
  onPhase(() => (app.phase < 0 ? 'no fault yet' : `${plan[app.phase]} (fault ${app.phase + 1})`));
  let injecting = true;
  let drainFrom = Infinity;

  const watch = (async () => {
    let lastReport = 0;
    while (app.producing || injecting || app.settled < app.acknowledged.size) {
      const pending = await pendingIntents(system.pool).catch(() => undefined);
      if (pending !== undefined) app.settled = app.acknowledged.size - pending;
      if (performance.now() - lastReport > 2000) {
        lastReport = performance.now();
        const s = ((lastReport - startedAt) / 1000).toFixed(0);
        const current = faults.length <= app.phase ? ` (${plan[app.phase]})` : '';
        options.onProgress?.(
          `chaos: ${s} s, ${app.acknowledged.size}/${options.intents} recorded, ${app.settled} settled, fault ${faults.length}/${plan.length}${current}`,
        );
      }
      if (performance.now() - drainFrom > DRAIN_LIMIT_MS) break; // verify says what is missing
      await sleep(200);
    }
  })();

  const context = { system, timing: options.timing, draw: () => random.next() };
  // Fault f is due once (f + 1) / (F + 1) of the intents are recorded. While it lasts, traffic
  // goes on up to 80% of a share, so some of each share is recorded after its fault ended,
  // however long the fault takes to recover from.
  for (let f = 0; f < plan.length; f++) {
    const due = Math.floor((f + 1) * share);
    app.ceiling = due;
    while (app.acknowledged.size < due && app.producing && performance.now() < endsAt)
      await sleep(20);
    app.ceiling = due + 0.8 * share;
    app.phase = f;
    faults.push(await injectFault(plan[f]!, context));
  }
  app.ceiling = Infinity;
  injecting = false;
  await app.done;
  drainFrom = performance.now();
  await watch;
  const elapsedMs = performance.now() - startedAt;
  const verdict = await verify(system.pool, system.sqliteFile, app.acknowledged);
  return {
    intents: app.acknowledged.size,
    elapsedMs,
    faults,
    phaseOf: app.phaseOf,
    verdict,
    failures: failuresOf(verdict, faults, options),
  };
}

function failuresOf(
  verdict: Verdict,
  faults: readonly FaultResult[],
  options: ChaosOptions,
): string[] {
  const failures: string[] = [];
  if (verdict.duplicates > 0) failures.push(`${verdict.duplicates} duplicate effect(s)`);
  if (verdict.lost > 0) failures.push(`${verdict.lost} acknowledged intent(s) lost`);
  if (verdict.effectsWithoutReceipt > 0)
    failures.push(`${verdict.effectsWithoutReceipt} effect(s) without a receipt`);
  if (verdict.receiptsWithoutEffect > 0)
    failures.push(`${verdict.receiptsWithoutEffect} receipt(s) without an effect`);
  const errors = [...verdict.attemptStatuses].filter(([status]) => status === '500');
  for (const [status, n] of errors) failures.push(`${n} attempt(s) answered ${status}`);
  for (const fault of faults) {
    if (fault.recoveryMs === undefined)
      failures.push(`${fault.kind} (${fault.target}): never recovered`);
    for (const violation of fault.violations) failures.push(`${fault.kind}: ${violation}`);
  }
  for (const kind of options.faults)
    if (!faults.some((fault) => fault.kind === kind)) failures.push(`${kind}: never injected`);
  return failures;
}

export { FAULT_KINDS };
