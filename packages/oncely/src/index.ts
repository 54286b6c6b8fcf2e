/**
 * oncely's public surface. The root holds what both ends of a retry share: the wire contract,
 * time and randomness, the retry policy's options, the client, the ledger and the sender's
 * journal. Stores and the HTTP layer have subpaths of their own (`oncely/stores/sqlite`,
 * `oncely/http`, `oncely/express`, ...), so importing the client never loads a database driver.
 *
 * Every export is named here (no `export *`), so nothing becomes public by being added to a
 * layer's index. What a user calls, and the types of its options and results, are here; what
 * the library uses to do it is not. Withheld on purpose, as ky withholds its internals:
 * - the ledger's and the client's inner steps: `decideClaim`, `normalizeReceipt`,
 *   `resolveLedgerOptions`, `versionOf`, `tombstoneOf`, `ENTRY_STATES`, `TAKE_OVER_REASONS`,
 *   `decideStart`, `mayStartAttempt`, `defaultObserve`, `observeResponse`, `defaultClassifyError`
 *   (the client's defaults, which its options replace), `outcomeOfStatus`,
 *   `SYNTHETIC_TIMEOUT_STATUS`, `isBusinessAnswer`, `receiptJson`, `isTransportError`,
 *   `classifyTransportError`;
 * - the policy as a pure step (the client and the simulator drive it): `decide`,
 *   `INITIAL_RETRY_STATE`, `backoffDelayMs`, `resolveRetryPolicy` (they are `oncely/policy`'s,
 *   the browser-safe subpath a simulator imports);
 * - helpers of the contract that are not the contract: `sha256Hex`, `canonicalJson` (use
 *   `fingerprint`), `keyProblem` (use `validateKey`), `parseRetryAfter`, `parseHttpDate`,
 *   `statusTable`, `classifyStatus`;
 * - the journal worker's steps: `prepareIntent`, `settleAttempt`, `stopBeforeAttempt`,
 *   `finalState`, `INTERRUPTED`, `emptyCounts`, `isFinished`;
 * - lists of values a type already names, and the defaults an option's doc states:
 *   `STATUS_CLASSES`, `OUTCOMES`, `STOP_REASONS`, `DELAY_REASONS`, `JITTERS`, `EXECUTE_KINDS`,
 *   `LOOKUP_KINDS`, `NOT_SENT_REASONS`, `NO_RESPONSE_REASONS`, `TRANSPORT_ERROR_CODES`,
 *   `IDEMPOTENT_METHODS`, `MAX_KEY_LENGTH`, `ATTEMPT_SPAN_EVENT`, `LEDGER_SPAN_EVENT`,
 *   `DEFAULT_STATUS_TABLE`, `DEFAULT_RECEIPT_HEADERS`, `DEFAULT_RETRY_POLICY`,
 *   `DEFAULT_RETRY_TOKEN_BUCKET`, `DEFAULT_CLIENT_OPTIONS`, `DEFAULT_LEDGER_OPTIONS`,
 *   `DEFAULT_OUTBOX_WORKER_OPTIONS`, `systemRandom`. `DEFAULT_OUTBOX_POLICY` is here all the same:
 *   the outbox's retry schedule is a promise to receivers that a person reads and quotes, and
 *   the client's own (`DEFAULT_RETRY_POLICY`) is public in `oncely/policy` (DESIGN.md, "Defaults
 *   per role": one visible defaults object each).
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
export { validateKey, keyFor, newKey } from './contract/idempotency-key.js';
export { fingerprint } from './contract/fingerprint.js';
export { formatHttpDate } from './contract/retry-after.js';
export type { Receipt } from './contract/receipt.js';
export {
  WEBHOOK_HEADER,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  signWebhook,
  verifyWebhook,
  type WebhookVerification,
} from './contract/standard-webhooks.js';
export type { HeaderSource } from './contract/header-source.js';
export {
  generateWebhookSecret,
  generateWebhookKeyPair,
  webhookKeyKind,
  type WebhookKeyKind,
} from './contract/webhook-keys.js';
export { checkSigningKey } from './contract/signing-key.js';
export { rotateSecrets, activeSecrets, type RotatingSecret } from './contract/secret-rotation.js';
export type { TraceApi } from './contract/trace-api.js';
export {
  describeTransportFailure,
  type TransportFailure,
} from './contract/transport-failure.js';

export {
  type Clock,
  systemClock,
  VirtualClock,
  type Random,
  seededRandom,
} from './time/index.js';

export {
  RetryTokenBucket,
  type RetryBudget,
  type RetryTokenBucketOptions,
  type RetryPolicyOptions,
  type StopReason,
} from './policy/index.js';

export { retry, createRetry, type RetryOptions, type RetryResult } from './client/retry.js';
export {
  RetryError,
  isRetryError,
  summarizeReport,
  wasNeverSent,
  type AttemptRecord,
  type RetryReport,
} from './client/retry-report.js';
export { HttpRetryError, isHttpRetryError } from './client/http-retry-error.js';
export { describeError } from './client/transport-error.js';
export {
  createNodeHttpFetch,
  type NodeHttpFetchOptions,
} from './client/node-http-fetch.js';
export {
  createClient,
  type Client,
  type ClientOptions,
  type ClientResult,
} from './client/fetch-client.js';
export type { KeyHeaderForm } from './contract/key-field.js';
export { attemptSpanEvents } from './client/attempt-span-events.js';

export {
  createLedger,
  SQL_DIALECTS,
  jsonReceipt,
  observeLedger,
  ledgerSpanEvents,
  type Ledger,
  type Effect,
  type LedgerOptions,
  type LedgerTuning,
  type ExecuteKind,
  type ExecuteResult,
  type LookupResult,
  type LedgerStore,
  type Durability,
  type SweepResult,
  type SqlDialect,
  type SqlHandle,
  type CarriesSqlHandle,
  type LedgerObserver,
  StepMismatchError,
  isStepMismatchError,
  type Step,
  type StepContext,
  type StepRecord,
  type StepStore,
} from './ledger/index.js';
export { stepKey } from './contract/step-key.js';

export {
  createJournal,
  IntentConflictError,
  IntentStateError,
  createOutboxWorker,
  INTENT_STATES,
  DEAD_STATES,
  EndpointStateError,
  ENDPOINT_STATES,
  type Journal,
  type IntentReport,
  type IntentFilter,
  type Backlog,
  type ReplayFilter,
  type ReplayOptions,
  type ReplayResult,
  type JournalStore,
  type JournalCapabilities,
  type IntentInput,
  type IntentState,
  type IntentRecord,
  type AttemptEntry,
  type AttemptResponse,
  ATTEMPT_BODY_BYTES,
  type StateCounts,
  type OutboxWorker,
  type OutboxWorkerOptions,
  type OutboxDeliver,
  type OutboxDelivery,
  type OutboxDeliveryAnswer,
  type SettledEvent,
  type Endpoints,
  type EndpointInput,
  type MessageInput,
  type PublishResult,
  type Subscription,
  type EndpointPatch,
  type EndpointRecord,
  type EndpointState,
  type DisabledNotice,
  type AttemptTracer,
  type AttemptSpan,
  type EndpointRetry,
  type IntentPolicy,
  DEFAULT_OUTBOX_POLICY,
  PARKED_AT,
} from './journal/index.js';
