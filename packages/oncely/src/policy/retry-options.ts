import { InvalidOptionError } from '../contract/errors.js';
import { DEFAULT_STATUS_TABLE, type StatusTable } from '../contract/status-class.js';
import { JITTERS, type Jitter } from './backoff.js';
import { SCHEDULE_JITTERS } from './schedule.js';

/** Everything that shapes one intent's retries. Durations end in Ms, instants in At. */
export interface RetryPolicyOptions {
  /** Attempts in all, the first included. @default 3 */
  readonly maxAttempts: number;
  /** First backoff step. @default 100 */
  readonly baseDelayMs: number;
  /**
   * Cap on a computed backoff (a server's Retry-After may ask for more). A base or a schedule step
   * above it is refused, never capped silently. @default 10000
   */
  readonly maxDelayMs: number;
  /** @default 'full' */
  readonly jitter: Jitter;
  /**
   * Fixed waits in ms, the n-th before retry n, in place of the exponential backoff (its last one
   * repeats past its end); jitter 'full' lengthens each by up to 10 % (policy/schedule.ts).
   * @default null (exponential backoff from baseDelayMs)
   */
  readonly schedule: readonly number[] | null;
  /**
   * The longest Retry-After we will honour; past it we stop instead of retrying early. Infinity
   * honours any that ends before the deadline. @default 30000
   */
  readonly maxRetryAfterMs: number;
  /**
   * How far jitter may stretch a server-given delay, as a fraction of it: Retry-After 2 s waits
   * between 2 s and 3 s at 0.5. Never shortens it. @default 0.5
   */
  readonly retryAfterJitterRatio: number;
  /**
   * The deadline: no attempt starts at or after this instant (ms since the epoch, on the clock
   * the loop reads), and no sleep ends past it. @default Infinity
   */
  readonly deadlineAt: number;
  /** @default the table of the webhook storm (docs/origins.md) */
  readonly statusTable: StatusTable;
}

export const DEFAULT_RETRY_POLICY: RetryPolicyOptions = {
  maxAttempts: 3,
  baseDelayMs: 100,
  maxDelayMs: 10_000,
  jitter: 'full',
  schedule: null,
  maxRetryAfterMs: 30_000,
  retryAfterJitterRatio: 0.5,
  deadlineAt: Number.POSITIVE_INFINITY,
  statusTable: DEFAULT_STATUS_TABLE,
};

/** What {@link resolveRetryPolicy} accepts: any policy option, and one older spelling. */
export interface RetryPolicyInput extends Partial<RetryPolicyOptions> {
  /**
   * @deprecated The older name of `deadlineAt`, still accepted: giving both with different
   * values is refused.
   */
  readonly closesAt?: number | undefined;
}

/** Fills defaults and checks every option once, at the edge; errors name the option and range. */
export function resolveRetryPolicy(options: RetryPolicyInput = {}): RetryPolicyOptions {
  const o = { ...DEFAULT_RETRY_POLICY, ...pickPolicy(options) };
  if (!Number.isInteger(o.maxAttempts) || o.maxAttempts < 1) {
    throw new InvalidOptionError('maxAttempts', o.maxAttempts, 'an integer >= 1');
  }
  nonNegative('baseDelayMs', o.baseDelayMs);
  nonNegative('maxDelayMs', o.maxDelayMs);
  if (!(typeof o.maxRetryAfterMs === 'number' && o.maxRetryAfterMs >= 0))
    throw new InvalidOptionError(
      'maxRetryAfterMs',
      o.maxRetryAfterMs,
      'a number of milliseconds >= 0, or Infinity',
    );
  // A base past the cap would be cut to the cap on every retry: say so rather than do it.
  if (o.schedule === null && o.baseDelayMs > o.maxDelayMs)
    throw new InvalidOptionError(
      'baseDelayMs',
      o.baseDelayMs,
      `at most maxDelayMs (${o.maxDelayMs}); raise maxDelayMs too`,
    );
  if (
    !Number.isFinite(o.retryAfterJitterRatio) ||
    o.retryAfterJitterRatio < 0 ||
    o.retryAfterJitterRatio > 10
  ) {
    throw new InvalidOptionError(
      'retryAfterJitterRatio',
      o.retryAfterJitterRatio,
      'a number from 0 to 10',
    );
  }
  if (!JITTERS.includes(o.jitter)) {
    throw new InvalidOptionError('jitter', o.jitter, `one of ${JITTERS.join(', ')}`);
  }
  checkSchedule(o.schedule, o.maxDelayMs, o.jitter);
  if (typeof o.deadlineAt !== 'number' || Number.isNaN(o.deadlineAt)) {
    throw new InvalidOptionError(
      options.closesAt !== undefined && options.deadlineAt === undefined
        ? 'closesAt'
        : 'deadlineAt',
      o.deadlineAt,
      'an instant in ms since the epoch, or Infinity',
    );
  }
  return o;
}

/** A schedule is steps within the cap, and a jitter a schedule knows. */
function checkSchedule(schedule: unknown, maxDelayMs: number, jitter: Jitter): void {
  if (schedule === null) return;
  const steps = 'a non-empty list of waits in ms, each finite and >= 0';
  if (!Array.isArray(schedule) || schedule.length === 0)
    throw new InvalidOptionError('schedule', schedule, steps);
  for (const step of schedule as unknown[]) {
    if (typeof step !== 'number' || !Number.isFinite(step) || step < 0)
      throw new InvalidOptionError('schedule', step, steps);
    if (step > maxDelayMs)
      throw new InvalidOptionError(
        'schedule',
        step,
        `steps of at most maxDelayMs (${maxDelayMs}); raise maxDelayMs too`,
      );
  }
  if (!SCHEDULE_JITTERS.includes(jitter))
    throw new InvalidOptionError(
      'jitter',
      jitter,
      `with a schedule, one of ${SCHEDULE_JITTERS.join(', ')}`,
    );
}

function nonNegative(option: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(option, value, 'a finite number of milliseconds >= 0');
  }
}

/**
 * The policy's own options, undefined ones dropped (they mean "the default"). `retry()` passes its
 * whole options object; its clock, signal, callbacks and key do not belong in the policy.
 */
function pickPolicy(options: RetryPolicyInput): Partial<RetryPolicyOptions> {
  const picked: Record<string, unknown> = {};
  for (const name of Object.keys(DEFAULT_RETRY_POLICY)) {
    const value = (options as Record<string, unknown>)[name];
    if (value !== undefined) picked[name] = value;
  }
  const deadlineAt = deadlineFrom(options.deadlineAt, options.closesAt);
  if (deadlineAt !== undefined) picked['deadlineAt'] = deadlineAt;
  return picked as Partial<RetryPolicyOptions>;
}

/**
 * The deadline from `deadlineAt` or its older name `closesAt`; undefined when neither is given.
 * Both given must agree: two deadlines are a mistake, not a choice.
 */
export function deadlineFrom(
  deadlineAt: number | undefined,
  closesAt: number | undefined,
): number | undefined {
  if (closesAt === undefined) return deadlineAt;
  if (deadlineAt !== undefined && !Object.is(deadlineAt, closesAt)) {
    throw new InvalidOptionError(
      'closesAt',
      closesAt,
      `the same instant as deadlineAt (${deadlineAt}), or nothing: closesAt is the older name of deadlineAt`,
    );
  }
  return closesAt;
}
