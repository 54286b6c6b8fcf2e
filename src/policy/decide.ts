import { outcomeOfStatus, type Outcome } from '../contract/status-class.js';
import { parseRetryAfter, type RetryAfter } from '../contract/retry-after.js';
import type { NoResponseReason, NotSentReason } from '../contract/transport-failure.js';
import type { Random } from '../time/random.js';
import { backoffDelayMs } from './backoff.js';
import type { RetryPolicyOptions } from './retry-options.js';

/** What one attempt came back with, as the policy sees it. */
export type Observation =
  /** The server answered. */
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter?: string | null | undefined;
      readonly date?: string | null | undefined;
    }
  /**
   * Sent, and no answer we can trust: a timeout, a reset, a swallowed ack. The work may have
   * happened. `status` is the synthetic one chosen at the adapter boundary (408) for status
   * tables; it is internal: reports show no status for it, since the server sent none.
   */
  | {
      readonly kind: 'unknown';
      readonly status: number;
      readonly detail: string;
      readonly reason?: NoResponseReason | undefined;
    }
  /**
   * The request never left (connection refused, DNS failure): nothing happened. Retried like a
   * retryable status, and safe to retry even when `mayRetry` is false (no key).
   */
  | { readonly kind: 'not_sent'; readonly reason: NotSentReason; readonly detail: string }
  /** The operation failed in a way no retry can mend (a bug, a refused input). */
  | { readonly kind: 'failure'; readonly detail: string };

/** Why a retry loop ended. A closed set: callers switch on it. */
export const STOP_REASONS = [
  'ok',
  'fatal_status',
  'unlisted_status',
  'operation_failed',
  'budget_exhausted',
  'deadline_passed',
  'retry_budget_drained',
  'retry_after_too_long',
  'unsafe_to_retry',
  'aborted',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** Why a delay has the length it has. */
export const DELAY_REASONS = ['backoff', 'retry-after', 'retry-after-unparsed'] as const;
export type DelayReason = (typeof DELAY_REASONS)[number];

/** The final word on an intent: done, refused, or perhaps done (never "refused" after an unknown). */
export type FinalOutcome = 'ok' | 'fail' | 'unknown';

export type Decision =
  | {
      readonly action: 'stop';
      readonly reason: StopReason;
      readonly outcome: FinalOutcome;
      /** How this attempt was classified. */
      readonly attemptOutcome: Outcome;
      readonly retryAfter: RetryAfter;
    }
  | {
      readonly action: 'retry';
      readonly attemptOutcome: Outcome;
      readonly delayMs: number;
      readonly delayReason: DelayReason;
      readonly retryAfter: RetryAfter;
      /** A retry after a timeout or transport failure: it costs more retry tokens. */
      readonly afterTimeout: boolean;
      /**
       * Retry tokens this retry takes from `inputs.retryTokens` (0 without a bucket). The driver
       * takes them at once, before anything else can touch the shared bucket.
       */
      readonly retryCost: number;
    };

/**
 * A view of a shared retry budget: what is left and what a retry costs. `RetryTokenBucket` is one;
 * the step only reads it, the driver spends `Decision.retryCost` when it retries.
 */
export interface RetryTokens {
  readonly balance: number;
  costOf(afterTimeout: boolean): number;
}

/** What the step is told besides the observation: the caller's state and the shared budget. */
export interface DecideInputs {
  /** The caller cancelled (its signal aborted). @default false */
  readonly aborted?: boolean | undefined;
  /** False when a retry would be unsafe (a POST without a key). @default true */
  readonly mayRetry?: boolean | undefined;
  /** The retry budget shared across calls, when there is one. */
  readonly retryTokens?: RetryTokens | undefined;
}

const NO_INPUTS: DecideInputs = {};

/** What the policy remembers between attempts. */
export interface RetryState {
  /** Attempts made so far, the one being judged included. */
  readonly attempt: number;
  /** The last delay chosen (decorrelated jitter grows from it). */
  readonly previousDelayMs: number;
  /** Whether any attempt ended unknown: then a give-up is reported as unknown, not failed. */
  readonly sawUnknown: boolean;
}

export const INITIAL_RETRY_STATE: RetryState = Object.freeze({
  attempt: 0,
  previousDelayMs: 0,
  sawUnknown: false,
});

/** May an attempt start now? None starts at or after the deadline. */
export function mayStartAttempt(
  nowMs: number,
  policy: Pick<RetryPolicyOptions, 'deadlineAt'>,
): boolean {
  return nowMs < policy.deadlineAt;
}

/** Why the next attempt must not start, with the final outcome; undefined when it may. */
export interface StartRefusal {
  readonly reason: Extract<StopReason, 'aborted' | 'deadline_passed'>;
  readonly outcome: FinalOutcome;
}

/**
 * The step before an attempt: a cancelled caller stops first (a loop cancelled before its first
 * attempt did nothing, so it failed), then the deadline (no attempt starts at or after it).
 */
export function decideStart(
  state: RetryState,
  nowMs: number,
  policy: Pick<RetryPolicyOptions, 'deadlineAt'>,
  inputs: DecideInputs = NO_INPUTS,
): StartRefusal | undefined {
  // Every call runs this before its first attempt: nothing is computed unless it refuses.
  if (inputs.aborted === true)
    return { reason: 'aborted', outcome: state.attempt === 0 ? 'fail' : outcomeSoFar(state) };
  if (nowMs >= policy.deadlineAt)
    return { reason: 'deadline_passed', outcome: outcomeSoFar(state) };
  return undefined;
}

/** How a loop that stops now ends: unknown once any attempt may have happened, else failed. */
function outcomeSoFar(state: RetryState): FinalOutcome {
  return state.sawUnknown ? 'unknown' : 'fail';
}

/**
 * The retry policy as a pure step: given what attempt number `state.attempt + 1` observed, the
 * time and a source of randomness, decide whether to stop or how long to wait. Nothing here
 * sleeps or reads a clock, so a schedule can be tested as a list of delays.
 *
 * Order matters and follows the webhook storm (docs/origins.md): success, then fatal statuses (never
 * retried, however much budget is left), then the caller's cancel (an answer that settles the
 * intent is reported as it is; anything else is the caller's abort), then the attempt budget, then
 * the deadline, then the wait (Retry-After before backoff), which must also end before the
 * deadline; only a retry the policy would make is then refused as unsafe (`mayRetry` false) or
 * unaffordable (the shared token bucket cannot cover its cost).
 */
export function decide(
  state: RetryState,
  observation: Observation,
  nowMs: number,
  random: Random,
  policy: RetryPolicyOptions,
  inputs: DecideInputs = NO_INPUTS,
): readonly [Decision, RetryState] {
  const attemptOutcome = classify(observation, policy);
  const retryAfter =
    observation.kind === 'response' && observation.retryAfter != null
      ? parseRetryAfter(observation.retryAfter, nowMs, observation.date)
      : ABSENT;
  // Every call pays for this path, so it is kept apart from the rest (whose closure would cost an
  // allocation on every call), and a first attempt's plain success allocates nothing: its decision
  // and next state are the same every time.
  if (attemptOutcome === 'ok') {
    if (retryAfter === ABSENT && state === INITIAL_RETRY_STATE) return FIRST_PLAIN_OK;
    return [
      retryAfter === ABSENT
        ? PLAIN_OK
        : { action: 'stop', reason: 'ok', outcome: 'ok', attemptOutcome, retryAfter },
      {
        attempt: state.attempt + 1,
        previousDelayMs: state.previousDelayMs,
        sawUnknown: state.sawUnknown,
      },
    ];
  }
  return decideNotOk(state, observation, attemptOutcome, retryAfter, nowMs, random, policy, inputs);
}

/**
 * True when {@link decide} ignores the time for this observation: a success without Retry-After
 * (only a wait, a deadline or a Retry-After date is measured against the clock). A caller that
 * times nothing reads the clock only when this is false.
 */
export function decidesWithoutClock(observation: Observation, policy: RetryPolicyOptions): boolean {
  return (
    (observation.kind !== 'response' || observation.retryAfter == null) &&
    classify(observation, policy) === 'ok'
  );
}

/** {@link decide} for an attempt that did not succeed: stop, or how long to wait. */
function decideNotOk(
  state: RetryState,
  observation: Observation,
  attemptOutcome: Exclude<Outcome, 'ok'>,
  retryAfter: RetryAfter,
  nowMs: number,
  random: Random,
  policy: RetryPolicyOptions,
  inputs: DecideInputs,
): readonly [Decision, RetryState] {
  const attempt = state.attempt + 1;
  const sawUnknown = state.sawUnknown || attemptOutcome === 'unknown';
  const next: RetryState = { attempt, previousDelayMs: state.previousDelayMs, sawUnknown };
  const stop = (
    reason: StopReason,
    outcome: FinalOutcome = sawUnknown ? 'unknown' : 'fail',
  ): readonly [Decision, RetryState] => [
    { action: 'stop', reason, outcome, attemptOutcome, retryAfter },
    next,
  ];

  if (attemptOutcome === 'fail') {
    if (observation.kind !== 'response') return stop('operation_failed');
    return stop(
      policy.statusTable.fatal.has(observation.status) ? 'fatal_status' : 'unlisted_status',
    );
  }
  if (inputs.aborted === true) return stop('aborted');
  if (attempt >= policy.maxAttempts) return stop('budget_exhausted');

  const timeLeftMs = policy.deadlineAt - nowMs;
  // The attempt came back at or after the deadline: nothing may start any more, so say so,
  // rather than blame a Retry-After that any wait at all would have overrun.
  if (timeLeftMs <= 0) return stop('deadline_passed');
  let delayMs: number;
  let delayReason: DelayReason;
  if (retryAfter.kind === 'delay') {
    // Never retry earlier than the server asked. If its ask is more than we may wait, stop now
    // rather than come back early: an early retry is the storm of docs/origins.md, "The webhook storm".
    if (retryAfter.delayMs > policy.maxRetryAfterMs || retryAfter.delayMs >= timeLeftMs)
      return stop('retry_after_too_long');
    const stretch = random.next() * policy.retryAfterJitterRatio * retryAfter.delayMs;
    // Jitter may lengthen the wait but must not push the next attempt onto or past the deadline.
    delayMs = Math.min(Math.ceil(retryAfter.delayMs + stretch), Math.ceil(timeLeftMs) - 1);
    delayMs = Math.max(delayMs, retryAfter.delayMs);
    delayReason = 'retry-after';
  } else {
    delayMs = backoffDelayMs(attempt, policy, random, state.previousDelayMs);
    delayReason = retryAfter.kind === 'unparsed' ? 'retry-after-unparsed' : 'backoff';
  }
  if (delayMs >= timeLeftMs) return stop('deadline_passed');
  // A request that never left did nothing: resending it cannot do anything twice.
  if (inputs.mayRetry === false && observation.kind !== 'not_sent') return stop('unsafe_to_retry');
  const afterTimeout = attemptOutcome === 'unknown';
  const tokens = inputs.retryTokens;
  const retryCost = tokens === undefined ? 0 : tokens.costOf(afterTimeout);
  if (tokens !== undefined && retryCost > tokens.balance) return stop('retry_budget_drained');

  return [
    {
      action: 'retry',
      attemptOutcome,
      delayMs,
      delayReason,
      retryAfter,
      afterTimeout,
      retryCost,
    },
    { ...next, previousDelayMs: delayMs },
  ];
}

const ABSENT: RetryAfter = Object.freeze({ kind: 'absent' });
const PLAIN_OK: Decision = Object.freeze({
  action: 'stop',
  reason: 'ok',
  outcome: 'ok',
  attemptOutcome: 'ok',
  retryAfter: ABSENT,
});
/**
 * decide(INITIAL_RETRY_STATE, a success without Retry-After): one answer for every call. Its parts
 * are frozen; the pair itself is not, because V8 reads a frozen array through a slow generic path
 * (the type keeps it read-only).
 */
const FIRST_PLAIN_OK: readonly [Decision, RetryState] = [
  PLAIN_OK,
  Object.freeze({ attempt: 1, previousDelayMs: 0, sawUnknown: false }),
];

function classify(observation: Observation, policy: RetryPolicyOptions): Outcome {
  switch (observation.kind) {
    case 'response':
      return outcomeOfStatus(
        observation.status,
        policy.statusTable,
        observation.retryAfter != null,
      );
    case 'unknown':
      return 'unknown';
    case 'not_sent':
      return 'retry';
    case 'failure':
      return 'fail';
  }
}
