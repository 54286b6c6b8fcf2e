import { InvalidOptionError } from 'oncely/policy';
import { ruleById } from './rules.js';
import { drawsFor, simulateWorld } from './run-world.js';
import { DEFAULT_WORLD_PARAMS, resolveWorldParams, type WorldParams } from './world-params.js';

/** Per-job expectations. `effects` is without a key: every arriving request acts. */
export interface PerJob {
  readonly delivered: number;
  readonly confirmed: number;
  readonly effects: number;
}

/**
 * With unlimited credits and horizon, a retry-after above the longest round trip and a cap of N
 * attempts, a job is retried exactly while it is unconfirmed, so its attempts are independent
 * trials that each confirm with probability c = (1 − q_r)(1 − q_a):
 *   delivered = 1 − q_r^N (only when every request is lost is nothing delivered, and then all N go);
 *   confirmed = 1 − (1 − c)^N;
 *   effects   = Σ_{k=1..N} P(attempt k is sent) (1 − q_r) = (1 − q_r)(1 − (1 − c)^N) / c.
 */
export function closedForm(requestLoss: number, receiptLoss: number, maxAttempts: number): PerJob {
  const c = (1 - requestLoss) * (1 - receiptLoss);
  const unconfirmed = (1 - c) ** maxAttempts;
  return {
    delivered: 1 - requestLoss ** maxAttempts,
    confirmed: 1 - unconfirmed,
    // As c → 0 the sum tends to N (1 − q_r); at c = 0 exactly, that is 0 or N · 0.
    effects:
      c === 0 ? maxAttempts * (1 - requestLoss) : ((1 - requestLoss) * (1 - unconfirmed)) / c,
  };
}

export interface ClosedFormOptions {
  /** @default 0.1 */
  readonly requestLoss?: number;
  /** @default 0.3 */
  readonly receiptLoss?: number;
  /** N, the attempts per job. @default 4 */
  readonly maxAttempts?: number;
  /** Worlds: with fewer than 2,000 the effects keep more than 1% of noise. @default 2000 */
  readonly seeds?: number;
  /** Largest relative error accepted on each mean. @default 0.01 */
  readonly tolerance?: number;
}

/** A worked example: 0.9999, 0.9813 and 1.4018. */
export const DEFAULT_CLOSED_FORM = {
  requestLoss: 0.1,
  receiptLoss: 0.3,
  maxAttempts: 4,
  seeds: 2000,
  tolerance: 0.01,
} as const;

export interface ClosedFormResult {
  readonly params: WorldParams;
  readonly seeds: number;
  readonly tolerance: number;
  readonly expected: PerJob;
  readonly simulated: PerJob;
  /** |simulated − expected| / expected, per quantity. */
  readonly relativeError: PerJob;
  readonly withinTolerance: boolean;
}

/** Simulates Retry oldest (no key) under the closed form's conditions and compares per-job means. */
export function closedFormCheck(options: ClosedFormOptions = {}): ClosedFormResult {
  const o = { ...DEFAULT_CLOSED_FORM, ...options };
  if (!Number.isInteger(o.seeds) || o.seeds < 1 || o.seeds > 1_000_000) {
    throw new InvalidOptionError('seeds', o.seeds, 'an integer from 1 to 1000000');
  }
  if (!Number.isFinite(o.tolerance) || o.tolerance <= 0)
    throw new InvalidOptionError('tolerance', o.tolerance, 'a number > 0');
  const { jobs, maxDelayTicks } = DEFAULT_WORLD_PARAMS;
  // The longest round trip is 2 · maxDelayTicks; one tick more and no retry races its receipt.
  const retryAfterTicks = 2 * maxDelayTicks + 1;
  const params = resolveWorldParams({
    requestLoss: o.requestLoss,
    receiptLoss: o.receiptLoss,
    maxAttempts: o.maxAttempts,
    retryAfterTicks,
    // "Unlimited": enough credits for every allowed attempt, and a horizon no dispatch reaches
    // (one send per tick, each job waiting at most retryAfterTicks between its attempts).
    credits: jobs * o.maxAttempts * DEFAULT_WORLD_PARAMS.keyedSendCost,
    horizonTicks: jobs * o.maxAttempts * (retryAfterTicks + 1),
  });
  const rule = ruleById('retry-oldest')!;
  let delivered = 0;
  let confirmed = 0;
  let effects = 0;
  for (let seed = 0; seed < o.seeds; seed++) {
    const world = { ...params, seed };
    const { metrics } = simulateWorld(world, rule, drawsFor(world), false);
    delivered += metrics.delivered;
    confirmed += metrics.confirmed;
    effects += metrics.delivered + metrics.duplicates;
  }
  const perJob = o.seeds * jobs;
  const expected = closedForm(o.requestLoss, o.receiptLoss, o.maxAttempts);
  const simulated = {
    delivered: delivered / perJob,
    confirmed: confirmed / perJob,
    effects: effects / perJob,
  };
  const error = (key: keyof PerJob): number => {
    const e = expected[key];
    return e === 0 ? Math.abs(simulated[key]) : Math.abs(simulated[key] - e) / e;
  };
  const relativeError = {
    delivered: error('delivered'),
    confirmed: error('confirmed'),
    effects: error('effects'),
  };
  const withinTolerance = Object.values(relativeError).every((e) => e <= o.tolerance);
  return {
    params,
    seeds: o.seeds,
    tolerance: o.tolerance,
    expected,
    simulated,
    relativeError,
    withinTolerance,
  };
}
