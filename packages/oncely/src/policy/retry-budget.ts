import type { RetryTokens } from './decide-inputs.js';

/**
 * What the client spends retries from: a {@link RetryTokenBucket} in this process, or a budget
 * shared by every process through a database (`createSqliteRetryBudget`,
 * `createPostgresRetryBudget`). The client asks `tryAcquire` before every retry and calls
 * `recordSuccess` once when a call succeeds.
 */
export interface RetryBudget extends RetryTokens {
  /**
   * True when `balance` is only the last balance this process saw (a shared budget): the policy
   * step then does not refuse on it, and `tryAcquire` alone decides.
   */
  readonly balanceIsEstimate?: boolean;
  /**
   * Takes `cost` tokens for one retry: true if taken. A shared budget answers asynchronously and
   * never rejects: an error or a timeout is a refusal (no retry).
   */
  tryAcquire(cost: number): boolean | Promise<boolean>;
  /** A call succeeded: refund the cost of the retry that succeeded, or the no-retry increment. */
  recordSuccess(lastRetryCost: number): void;
}
