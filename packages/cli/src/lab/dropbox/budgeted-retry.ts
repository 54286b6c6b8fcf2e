import {
  retry,
  type RetryOptions,
  isRetryError,
  type AttemptRecord,
  type RetryReport,
} from 'oncely';
import type { InMemoryDropbox, SubmissionStatus } from './in-memory-dropbox.js';

export interface BudgetedRetryResult {
  /** The seed's event list: `timeout:…` per unknown attempt, the status on success, `stop:…` when it gave up. */
  readonly events: string[];
  readonly report: RetryReport;
}

/**
 * The dropbox story's fix (docs/origins.md), built on oncely's retry: one key for every attempt, a hard attempt budget, and
 * (the extension) a deadline. A timeout is unknown, never rejected: it is retried under the same
 * key only, and a give-up after it says `unknown`.
 */
export async function budgetedRetry(
  box: InMemoryDropbox,
  student: string,
  assignment: string,
  options: RetryOptions<SubmissionStatus> & { readonly key: string },
): Promise<BudgetedRetryResult> {
  try {
    const { value, report } = await retry(
      ({ key }) => box.submit(key!, student, assignment),
      options,
    );
    return { events: [...report.attempts.slice(0, -1).map(eventOf), value], report };
  } catch (error) {
    if (!isRetryError(error)) throw error;
    const { report } = error;
    return { events: [...report.attempts.map(eventOf), `stop:${report.stopReason}`], report };
  }
}

/** An attempt as the seed prints it: a lost ack is `timeout:<why>`, anything else `<outcome>:<why>`. */
function eventOf(attempt: AttemptRecord): string {
  const why = attempt.detail ?? String(attempt.status ?? '');
  return attempt.outcome === 'unknown' ? `timeout:${why}` : `${attempt.outcome}:${why}`;
}
