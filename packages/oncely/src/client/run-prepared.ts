import { decide, decidesWithoutClock, decideStart, INITIAL_RETRY_STATE } from '../policy/decide.js';
import { firstAttemptContext, type AttemptContext } from './attempt-context.js';
import { AttemptLog, attemptRecord } from './attempt-log.js';
import { giveUp } from './give-up.js';
import { judgeAttempt, type Judged } from './judge-attempt.js';
import type { PreparedRetry } from './prepare-retry.js';
import { retryLoop } from './retry-loop.js';
import { FirstAttemptSuccess, type RetryResult } from './retry-result.js';

/**
 * The driver of the policy step: every stop reason comes from `decideStart` and `decide`; the
 * driver only runs attempts, sleeps, spends the retry tokens a retry costs, and keeps the record.
 *
 * Most calls end with their first attempt, so it runs without an async frame of its own: the
 * operation's promise is chained once, a success reads the clock twice (the attempt's start and
 * end, which its report carries) and allocates its result and nothing else. The attempt log is
 * made only when a loop goes on, in {@link retryLoop}. Never throws: every failure rejects.
 */
export function runPrepared<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
): Promise<RetryResult<T>> {
  try {
    return startFirstAttempt(operation, prepared);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Everything up to the first attempt's promise; what it throws, runPrepared rejects with. */
function startFirstAttempt<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
): Promise<RetryResult<T>> {
  const { signal } = prepared;
  // Without a signal nothing can cancel: one shared inputs object serves every call.
  const inputs =
    signal === undefined ? prepared.inputs : { ...prepared.inputs, aborted: signal.aborted };
  // Untimed, the start is NaN: only a deadline compares it, and then the attempt is timed.
  const startedAt = prepared.timesFirstAttempt ? prepared.clock.now() : Number.NaN;
  const refusal = decideStart(INITIAL_RETRY_STATE, startedAt, prepared.policy, inputs);
  if (refusal) {
    const log = new AttemptLog(prepared.key, startedAt);
    throw giveUp(log, refusal.reason, refusal.outcome, prepared, undefined, undefined);
  }
  let pending: T | Promise<T>;
  try {
    pending = operation(firstAttemptContext(prepared));
  } catch (error) {
    return firstAttemptThrew(operation, prepared, inputs, startedAt, error);
  }
  return Promise.resolve(pending).then(
    (value) => firstAttemptReturned(operation, prepared, inputs, startedAt, value),
    (error: unknown) => firstAttemptThrew(operation, prepared, inputs, startedAt, error),
  );
}

/** The common path, inline: observe, read the clock once, ask the step; a success ends here. */
function firstAttemptReturned<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  startedAt: number,
  value: T,
): RetryResult<T> | Promise<RetryResult<T>> {
  const { signal } = prepared;
  const observation = prepared.observe(value);
  const endedAt =
    prepared.timesFirstAttempt || !decidesWithoutClock(observation, prepared.policy)
      ? prepared.clock.now()
      : Number.NaN;
  if (signal !== undefined) inputs.aborted = signal.aborted;
  const step = decide(
    INITIAL_RETRY_STATE,
    observation,
    endedAt,
    prepared.random,
    prepared.policy,
    inputs,
  );
  const decision = step[0];
  if (decision.action === 'stop' && decision.reason === 'ok') {
    const { onAttempt, retryBudget } = prepared;
    onAttempt?.(attemptRecord({ attempt: 1, startedAt, endedAt, observation, decision }));
    retryBudget?.recordSuccess(0);
    return new FirstAttemptSuccess(
      value,
      prepared.key,
      startedAt,
      endedAt,
      observation,
      decision,
      retryBudget?.balance,
    );
  }
  const log = new AttemptLog(prepared.key, startedAt);
  log.add(1, startedAt, endedAt, observation, decision, prepared.onAttempt);
  const judged: Judged<T> = {
    decision,
    state: step[1],
    value,
    lastValue: value,
    lastError: undefined,
    endedAt,
  };
  return retryLoop(operation, prepared, inputs, log, judged);
}

/** The first attempt threw (or its promise rejected): judge it, then go on in the loop. */
function firstAttemptThrew<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  startedAt: number,
  error: unknown,
): Promise<RetryResult<T>> {
  const log = new AttemptLog(prepared.key, startedAt);
  const judged = judgeAttempt(
    prepared,
    inputs,
    log,
    INITIAL_RETRY_STATE,
    startedAt,
    undefined,
    error,
    true,
    undefined,
  );
  return retryLoop(operation, prepared, inputs, log, judged);
}
