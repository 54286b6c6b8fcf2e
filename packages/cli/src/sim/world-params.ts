import { InvalidOptionError } from 'oncely/policy';

/**
 * Everything that shapes one simulated world. Time is counted in whole ticks: durations end in
 * `Ticks`, instants in `At`. `null` means "no limit" (or "never") so params survive JSON intact.
 * docs/simulator.md explains each choice against the simulator write-up (docs/origins.md).
 */
export interface WorldParams {
  /** Which world: every random fact comes from streams seeded by it. @default 0 */
  readonly seed: number;
  /** Jobs to deliver, each one intent. @default 18 */
  readonly jobs: number;
  /**
   * Dispatch happens at ticks 0 … horizonTicks − 1; messages in flight then still arrive during
   * a drain of 2 × maxDelayTicks. 72 rather than 60: see docs/simulator.md, "The horizon".
   * @default 72
   */
  readonly horizonTicks: number;
  /** Sends per tick, at most. @default 1 */
  readonly sendsPerTick: number;
  /** The credit ceiling on all sends; unused credits are not spent. @default 60 */
  readonly credits: number;
  /** Credits a send without a key costs. @default 1 */
  readonly sendCost: number;
  /** Credits a keyed send costs (docs/origins.md, "The retry-rule simulator": "Keyed requests consume two each"). @default 2 */
  readonly keyedSendCost: number;
  /** Probability a request is lost before delivery, 0 … 1. @default 0.2 */
  readonly requestLoss: number;
  /** Probability a receipt is lost after the request arrived (suppressed repeats too). @default 0.4 */
  readonly receiptLoss: number;
  /** Each leg's delay is a uniform integer in 1 … maxDelayTicks. @default 6 */
  readonly maxDelayTicks: number;
  /** Ticks since a job's last send before it may be sent again (the base for Backoff + key). @default 8 */
  readonly retryAfterTicks: number;
  /** Ceiling on the adaptive retry-afters (Backoff + key, Learned timeout + key). @default 64 */
  readonly maxRetryAfterTicks: number;
  /** Attempts per job, the first included; null for no cap. @default null */
  readonly maxAttempts: number | null;
  /** A stored key lives while now − (its first effect) < retentionTicks; null for the whole run. @default null */
  readonly retentionTicks: number | null;
  /** The tick at which the receiver's ledger is cleared; null for never. @default null */
  readonly forgetKeysAt: number | null;
}

/** The default world: the simulator write-up's default channel (docs/origins.md). */
export const DEFAULT_WORLD_PARAMS: WorldParams = {
  seed: 0,
  jobs: 18,
  horizonTicks: 72,
  sendsPerTick: 1,
  credits: 60,
  sendCost: 1,
  keyedSendCost: 2,
  requestLoss: 0.2,
  receiptLoss: 0.4,
  maxDelayTicks: 6,
  retryAfterTicks: 8,
  maxRetryAfterTicks: 64,
  maxAttempts: null,
  retentionTicks: null,
  forgetKeysAt: null,
};

/** The parameter names, in a stable order (CLI flags, JSON, CSV columns). */
export const WORLD_PARAM_NAMES = Object.keys(
  DEFAULT_WORLD_PARAMS,
) as readonly (keyof WorldParams)[];

/**
 * Fills defaults and checks every parameter once, at the edge; errors name the parameter and the
 * allowed range. Limits keep a world small enough to simulate in well under a millisecond.
 */
export function resolveWorldParams(partial: Partial<WorldParams> = {}): WorldParams {
  const p: WorldParams = { ...DEFAULT_WORLD_PARAMS, ...dropUndefined(partial) };
  integer('seed', p.seed, 0, 0xffff_ffff);
  integer('jobs', p.jobs, 1, 10_000);
  integer('horizonTicks', p.horizonTicks, 0, 1_000_000);
  integer('sendsPerTick', p.sendsPerTick, 1, 10_000);
  integer('credits', p.credits, 0, 1_000_000_000);
  integer('sendCost', p.sendCost, 0, 1_000_000);
  integer('keyedSendCost', p.keyedSendCost, 0, 1_000_000);
  probability('requestLoss', p.requestLoss);
  probability('receiptLoss', p.receiptLoss);
  integer('maxDelayTicks', p.maxDelayTicks, 1, 10_000);
  integer('retryAfterTicks', p.retryAfterTicks, 1, 1_000_000);
  integer('maxRetryAfterTicks', p.maxRetryAfterTicks, 1, 1_000_000);
  if (p.maxAttempts !== null)
    integer('maxAttempts', p.maxAttempts, 1, 1_000_000, ', or null for no cap');
  if (p.retentionTicks !== null)
    integer('retentionTicks', p.retentionTicks, 1, 1_000_000, ', or null for the whole run');
  if (p.forgetKeysAt !== null)
    integer('forgetKeysAt', p.forgetKeysAt, 0, 1_000_000, ', or null for never');
  return p;
}

function integer(option: string, value: unknown, min: number, max: number, orElse = ''): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(option, value, `an integer from ${min} to ${max}${orElse}`);
  }
}

function probability(option: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new InvalidOptionError(option, value, 'a probability from 0 to 1');
  }
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
