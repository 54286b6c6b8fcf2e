import type { FinalOutcome, StopReason } from '../policy/decide.js';
import type { AttemptLog } from './attempt-log.js';
import type { PreparedRetry } from './prepare-retry.js';
import { RetryError } from './retry-report.js';

/** The error a loop ends with when it gives up: the report, the last value and the last error. */
export function giveUp(
  log: AttemptLog,
  reason: StopReason,
  outcome: FinalOutcome,
  prepared: Pick<PreparedRetry<unknown>, 'clock' | 'retryBudget'>,
  lastValue: unknown,
  lastError: unknown,
): RetryError {
  const report = log.report(reason, outcome, prepared.clock.now(), prepared.retryBudget?.balance);
  return new RetryError(report, lastValue, lastError);
}
