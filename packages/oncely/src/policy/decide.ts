import { outcomeOfStatus, type Outcome } from '../contract/status-class.js';
import { parseRetryAfter, type RetryAfter } from '../contract/retry-after.js';
import type { Random } from '../time/random.js';
import { backoffDelayMs } from './backoff.js';
import { NO_INPUTS, type DecideInputs } from './decide-inputs.js';
import type { Decision, DelayReason, FinalOutcome, StopReason } from './decision.js';
import type { Observation } from './observation.js';
import type { RetryPolicyOptions } from './retry-options.js';
import { INITIAL_RETRY_STATE, type RetryState } from './retry-state.js';

// The step's vocabulary lives one concept per file; this module is where callers find all of it.
export type { Observation } from './observation.js';
export {
  STOP_REASONS,
  DELAY_REASONS,
  type StopReason,
  type DelayReason,
  type FinalOutcome,
  type Decision,
} from './decision.js';
export type { DecideInputs, RetryTokens } from './decide-inputs.js';
export { INITIAL_RETRY_STATE, type RetryState } from './retry-state.js';
export { mayStartAttempt, decideStart, type StartRefusal } from './decide-start.js';

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
