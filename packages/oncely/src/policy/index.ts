export { backoffDelayMs, JITTERS, type Jitter, type BackoffOptions } from './backoff.js';
export type { RetryBudget } from './retry-budget.js';
export {
  RetryTokenBucket,
  resolveRetryTokenBucketOptions,
  DEFAULT_RETRY_TOKEN_BUCKET,
  type RetryTokenBucketOptions,
} from './retry-token-bucket.js';
export {
  resolveRetryPolicy,
  DEFAULT_RETRY_POLICY,
  type RetryPolicyOptions,
  type RetryPolicyInput,
} from './retry-options.js';
export {
  decide,
  mayStartAttempt,
  decideStart,
  INITIAL_RETRY_STATE,
  STOP_REASONS,
  DELAY_REASONS,
  type Decision,
  type DecideInputs,
  type RetryTokens,
  type StartRefusal,
  type DelayReason,
  type FinalOutcome,
  type Observation,
  type RetryState,
  type StopReason,
} from './decide.js';
