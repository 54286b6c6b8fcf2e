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

/** The inputs of a step told nothing: one shared object, so a default allocates nothing. */
export const NO_INPUTS: DecideInputs = {};
