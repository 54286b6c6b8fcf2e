import { SYNTHETIC_TIMEOUT_STATUS } from '../contract/status-class.js';
import { decide, type Decision, type Observation, type RetryState } from '../policy/decide.js';
import type { AttemptLog } from './attempt-log.js';
import type { PreparedRetry } from './prepare-retry.js';

/** An attempt judged by the policy step, with what it returned or threw. */
export interface Judged<T> {
  readonly decision: Decision;
  readonly state: RetryState;
  readonly value: T | undefined;
  readonly lastValue: unknown;
  readonly lastError: unknown;
  readonly endedAt: number;
}

/** Observes what an attempt returned or threw, asks the policy step, and records the attempt. */
export function judgeAttempt<T>(
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  log: AttemptLog,
  state: RetryState,
  attemptStartedAt: number,
  value: T | undefined,
  error: unknown,
  threw: boolean,
  previous: Judged<T> | undefined,
): Judged<T> {
  const { signal } = prepared;
  let observation: Observation;
  if (!threw) observation = prepared.observe(value as T);
  else observation = signal?.aborted === true ? ABORTED_IN_FLIGHT : prepared.classifyError(error);
  const endedAt = prepared.clock.now();
  if (signal !== undefined) inputs.aborted = signal.aborted;
  const [decision, next] = decide(
    state,
    observation,
    endedAt,
    prepared.random,
    prepared.policy,
    inputs,
  );
  log.add(next.attempt, attemptStartedAt, endedAt, observation, decision, prepared.onAttempt);
  return {
    decision,
    state: next,
    value,
    lastValue: threw ? previous?.lastValue : value,
    lastError: threw ? error : previous?.lastError,
    endedAt,
  };
}

/** An attempt cut by the caller's own abort: it may have happened. */
const ABORTED_IN_FLIGHT: Observation = {
  kind: 'unknown',
  status: SYNTHETIC_TIMEOUT_STATUS,
  reason: 'aborted',
  detail: 'aborted',
};
