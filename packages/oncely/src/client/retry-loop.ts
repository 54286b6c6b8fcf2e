import { decideStart } from '../policy/decide.js';
import type { AttemptContext } from './attempt-context.js';
import type { AttemptLog } from './attempt-log.js';
import { giveUp } from './give-up.js';
import { judgeAttempt, type Judged } from './judge-attempt.js';
import type { PreparedRetry } from './prepare-retry.js';
import { LoggedSuccess, type RetryResult } from './retry-result.js';

/** Everything after a first attempt that did not succeed: stop, or pay, wait and try again. */
export async function retryLoop<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  log: AttemptLog,
  first: Judged<T>,
): Promise<RetryResult<T>> {
  const { clock, signal, retryBudget, policy } = prepared;
  let judged = first;
  let lastRetryCost = 0;
  for (;;) {
    const { decision, state } = judged;
    if (decision.action === 'stop') {
      if (decision.reason === 'ok') {
        retryBudget?.recordSuccess(lastRetryCost);
        return new LoggedSuccess(judged.value as T, log, judged.endedAt, retryBudget?.balance);
      }
      throw giveUp(
        log,
        decision.reason,
        decision.outcome,
        prepared,
        judged.lastValue,
        judged.lastError,
      );
    }
    if (retryBudget) {
      // An in-process bucket answers true at once (decide() saw that it covers the cost, and
      // nothing ran since). A shared one answers after a round trip, and may refuse.
      const granted = retryBudget.tryAcquire(decision.retryCost);
      const taken = granted === true || (granted !== false && (await settledTrue(granted)));
      if (!taken)
        throw giveUp(
          log,
          'retry_budget_drained',
          state.sawUnknown ? 'unknown' : 'fail',
          prepared,
          judged.lastValue,
          judged.lastError,
        );
      lastRetryCost = decision.retryCost;
    }
    const sleepStartedAt = clock.now();
    try {
      await clock.sleep(decision.delayMs, signal);
    } catch {
      log.slept(clock.now() - sleepStartedAt);
      throw giveUp(
        log,
        'aborted',
        state.sawUnknown ? 'unknown' : 'fail',
        prepared,
        judged.lastValue,
        judged.lastError,
      );
    }
    const attemptStartedAt = clock.now();
    log.slept(attemptStartedAt - sleepStartedAt);
    if (signal !== undefined) inputs.aborted = signal.aborted;
    const refusal = decideStart(state, attemptStartedAt, policy, inputs);
    if (refusal)
      throw giveUp(
        log,
        refusal.reason,
        refusal.outcome,
        prepared,
        judged.lastValue,
        judged.lastError,
      );
    try {
      const value = await operation({ attempt: state.attempt + 1, key: prepared.key, signal });
      judged = judgeAttempt(
        prepared,
        inputs,
        log,
        state,
        attemptStartedAt,
        value,
        undefined,
        false,
        judged,
      );
    } catch (error) {
      judged = judgeAttempt(
        prepared,
        inputs,
        log,
        state,
        attemptStartedAt,
        undefined,
        error,
        true,
        judged,
      );
    }
  }
}

/** A budget's answer; one that rejects (which a budget should not) is a refusal: fail closed. */
function settledTrue(answer: Promise<boolean>): Promise<boolean> {
  return answer.then(
    (granted) => granted === true,
    () => false,
  );
}
