/**
 * oncely's public surface. The root holds what both ends of a retry share: the wire contract,
 * time and randomness, the retry policy, the client, the ledger and the sender's journal. Stores,
 * the HTTP layer and the simulator have subpaths of their own (`oncely/stores/sqlite`,
 * `oncely/http`, `oncely/sim`), so importing the client never loads a database driver.
 *
 * Every export is named here (no `export *`), so nothing becomes public by being added to a
 * layer's index. Withheld on purpose, as ky withholds its internals:
 * - the ledger's and the client's inner steps: `decideClaim`, `normalizeReceipt`,
 *   `resolveLedgerOptions`, `versionOf`, `tombstoneOf`, `ENTRY_STATES`, `TAKE_OVER_REASONS`,
 *   `decideStart`, `mayStartAttempt`, `defaultObserve`, `observeResponse`, `defaultClassifyError`
 *   (the client's defaults, which its options replace), `outcomeOfStatus`,
 *   `SYNTHETIC_TIMEOUT_STATUS`;
 * - helpers of the contract that are not the contract: `sha256Hex`, `canonicalJson` (use
 *   `fingerprint`), `keyProblem` (use `validateKey`);
 * - the journal worker's steps: `prepareIntent`, `settleAttempt`, `stopBeforeAttempt`,
 *   `finalState`, `INTERRUPTED`, `emptyCounts`, `isFinished`.
 * `test/public-surface.test.ts` lists every export and asserts these stay absent.
 */
export {
  OncelyError,
  InvalidOptionError,
  InvalidKeyError,
  isOncelyError,
  isInvalidOptionError,
  isInvalidKeyError,
} from './contract/errors.js';
export { HEADER, PROBLEM_JSON } from './contract/headers.js';
export { MAX_KEY_LENGTH, validateKey, keyFor, newKey } from './contract/idempotency-key.js';
export { fingerprint } from './contract/fingerprint.js';
export {
  STATUS_CLASSES,
  DEFAULT_STATUS_TABLE,
  OUTCOMES,
  statusTable,
  classifyStatus,
  type StatusClass,
  type StatusTable,
  type Outcome,
} from './contract/status-class.js';
export {
  parseRetryAfter,
  parseHttpDate,
  formatHttpDate,
  type RetryAfter,
} from './contract/retry-after.js';
export { DEFAULT_RECEIPT_HEADERS, type Receipt } from './contract/receipt.js';
export {
  WEBHOOK_HEADER,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  signWebhook,
  verifyWebhook,
  type WebhookVerification,
} from './contract/standard-webhooks.js';
export type { TraceApi, SpanEventAttributes } from './contract/trace-api.js';
export {
  NOT_SENT_REASONS,
  NO_RESPONSE_REASONS,
  describeTransportFailure,
  type NotSentReason,
  type NoResponseReason,
  type TransportFailure,
} from './contract/transport-failure.js';

export {
  type Clock,
  systemClock,
  VirtualClock,
  type VirtualClockOptions,
  type Random,
  systemRandom,
  seededRandom,
} from './time/index.js';

export {
  decide,
  INITIAL_RETRY_STATE,
  STOP_REASONS,
  DELAY_REASONS,
  backoffDelayMs,
  JITTERS,
  RetryTokenBucket,
  DEFAULT_RETRY_TOKEN_BUCKET,
  resolveRetryPolicy,
  DEFAULT_RETRY_POLICY,
  type Decision,
  type DecideInputs,
  type DelayReason,
  type FinalOutcome,
  type Observation,
  type RetryState,
  type RetryTokens,
  type StopReason,
  type Jitter,
  type BackoffOptions,
  type RetryTokenBucketOptions,
  type RetryPolicyOptions,
} from './policy/index.js';

export {
  retry,
  createRetry,
  type RetryCall,
  type AttemptContext,
  type RetryOptions,
  type RetryResult,
} from './client/retry.js';
export {
  RetryError,
  isRetryError,
  summarizeReport,
  wasNeverSent,
  type AttemptRecord,
  type RetryReport,
} from './client/retry-report.js';
export {
  HttpRetryError,
  isHttpRetryError,
  type ResponseProblem,
} from './client/http-retry-error.js';
export {
  isTransportError,
  classifyTransportError,
  describeError,
  TRANSPORT_ERROR_CODES,
} from './client/transport-error.js';
export {
  createClient,
  IDEMPOTENT_METHODS,
  DEFAULT_CLIENT_OPTIONS,
  type Client,
  type ClientOptions,
  type ClientResult,
  type ClientResultFor,
  type SettledClientResult,
  type ThrowOn,
  type OncelyRequestInit,
} from './client/fetch-client.js';
export { attemptSpanEvents, ATTEMPT_SPAN_EVENT } from './client/attempt-span-events.js';

export {
  createLedger,
  isBusinessAnswer,
  DEFAULT_LEDGER_OPTIONS,
  EXECUTE_KINDS,
  LOOKUP_KINDS,
  SQL_DIALECTS,
  jsonReceipt,
  receiptJson,
  observeLedger,
  ledgerSpanEvents,
  LEDGER_SPAN_EVENT,
  type Ledger,
  type Effect,
  type DeferredEffect,
  type DeferredOutcome,
  type DeferredWrite,
  type LedgerOptions,
  type LedgerTuning,
  type Claim,
  type ExecuteKind,
  type ExecuteResult,
  type LedgerRequest,
  type LookupKind,
  type LookupResult,
  type LedgerStore,
  type SweepResult,
  type SqlDialect,
  type SqlHandle,
  type SqlRunResult,
  type LedgerEntry,
  type LedgerDecision,
  type LedgerObserver,
} from './ledger/index.js';

export {
  createJournal,
  IntentConflictError,
  IntentStateError,
  createOutboxWorker,
  DEFAULT_OUTBOX_WORKER_OPTIONS,
  INTENT_STATES,
  type Journal,
  type IntentReport,
  type RecordResult,
  type JournalStore,
  type IntentFilter,
  type Reopening,
  type IntentInput,
  type IntentState,
  type IntentPolicy,
  type NewIntent,
  type IntentRecord,
  type FinalRecord,
  type AttemptEntry,
  type ClaimedIntent,
  type Settlement,
  type AttemptStart,
  type StateCounts,
  type OutboxWorker,
  type OutboxWorkerOptions,
  type PassResult,
  type SettledEvent,
} from './journal/index.js';
