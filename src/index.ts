/**
 * oncely's public surface. The root holds what both ends of a retry share: the wire contract,
 * time and randomness, the retry policy, the client and the ledger. Stores, the HTTP layer and
 * the simulator have subpaths of their own (`oncely/stores/sqlite`, `oncely/http`, `oncely/sim`),
 * so importing the client never loads a database driver.
 */
export * from './contract/index.js';
export { type Clock, systemClock, VirtualClock, type VirtualClockOptions, type Random, systemRandom, seededRandom } from './time/index.js';
export * from './policy/index.js';
export { retry, createRetry, type RetryCall, defaultObserve, defaultClassifyError, type AttemptContext, type RetryOptions, type RetryResult } from './client/retry.js';
export { RetryError, isRetryError, summarizeReport, type AttemptRecord, type RetryReport } from './client/retry-report.js';
export { isTransportError, describeError, TRANSPORT_ERROR_CODES } from './client/transport-error.js';
export {
  createClient,
  IDEMPOTENT_METHODS,
  DEFAULT_CLIENT_OPTIONS,
  observeResponse,
  classifyFetchError,
  type Client,
  type ClientOptions,
  type ClientResult,
  type OncelyRequestInit,
} from './client/fetch-client.js';
export { attemptSpanEvents, ATTEMPT_SPAN_EVENT } from './client/attempt-span-events.js';
export * from './ledger/index.js';
export * from './journal/index.js';
