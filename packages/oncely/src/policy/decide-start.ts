import type { RetryPolicyOptions } from './retry-options.js';
import { NO_INPUTS, type DecideInputs } from './decide-inputs.js';
import type { FinalOutcome, StopReason } from './decision.js';
import type { RetryState } from './retry-state.js';

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
