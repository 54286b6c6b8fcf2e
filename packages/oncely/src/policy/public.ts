/**
 * `oncely/policy`: the retry policy as a pure step, for simulators and tests of a policy. The
 * client drives `decide` against the network; a simulator drives the same step against a model
 * (oncely's own page does), so what it shows of a policy is what the client does with it.
 *
 * Browser-safe: no `node:*`, no clock, no randomness but the `Random` passed in. The root
 * (`oncely`) is not, since it carries the fetch client and the stores' interfaces.
 */
export { InvalidOptionError, isInvalidOptionError } from '../contract/errors.js';
export { SYNTHETIC_TIMEOUT_STATUS } from '../contract/status-class.js';
export { type Random, seededRandom } from '../time/random.js';
export { backoffDelayMs, type BackoffOptions, type Jitter } from './backoff.js';
export {
  resolveRetryPolicy,
  DEFAULT_RETRY_POLICY,
  type RetryPolicyOptions,
  type RetryPolicyInput,
} from './retry-options.js';
export { RetryTokenBucket, type RetryTokenBucketOptions } from './retry-token-bucket.js';
export {
  decide,
  INITIAL_RETRY_STATE,
  type Decision,
  type DecideInputs,
  type Observation,
  type RetryState,
  type StopReason,
} from './decide.js';
