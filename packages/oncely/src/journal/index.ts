/** The sender's journal: durable intents, their attempts and outcomes, and the outbox worker. */
export {
  INTENT_STATES,
  emptyCounts,
  isFinished,
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
} from './intent.js';
export type {
  JournalStore,
  JournalCapabilities,
  IntentFilter,
  Reopening,
  BatchReopening,
  Backlog,
} from './journal-store.js';
export { DEAD_STATES } from './intent-filter.js';
export type { ReplayFilter, ReplayOptions, ReplayResult } from './replay.js';
export {
  createJournal,
  IntentConflictError,
  IntentStateError,
  type Journal,
  type IntentReport,
  type RecordResult,
} from './journal.js';
export { prepareIntent, type IntentInput } from './prepare-intent.js';
export {
  ENDPOINT_STATES,
  PARKED_AT,
  type EndpointRecord,
  type EndpointSecret,
  type EndpointState,
  type EndpointSettings,
  type EndpointHealth,
  type BreakerSettings,
  type BreakerState,
  type EndpointStore,
  type EndpointRetry,
} from './endpoint.js';
export {
  DEFAULT_OUTBOX_POLICY,
  DEFAULT_OUTBOX_SCHEDULE_MS,
  resolveOutboxPolicy,
  type OutboxRetryInput,
} from './outbox-policy.js';
export type { EndpointInput } from './endpoint-input.js';
export type { EndpointPatch } from './endpoint-patch.js';
export type { MessageInput, PublishResult } from './publish.js';
export type { Subscription } from './subscription.js';
export { EndpointStateError, type Endpoints } from './endpoints.js';
export type { DisabledNotice } from './endpoint-notice.js';
export type { AttemptTracer, AttemptSpan } from './attempt-tracing.js';
export { ATTEMPT_BODY_BYTES, type AttemptResponse } from './attempt-response.js';
export {
  createOutboxWorker,
  DEFAULT_OUTBOX_WORKER_OPTIONS,
  type OutboxWorker,
  type OutboxWorkerOptions,
  type PassResult,
  type SettledEvent,
} from './outbox-worker.js';
export type { OutboxDeliver, OutboxDelivery, OutboxDeliveryAnswer } from './outbox-deliver.js';
export {
  settleAttempt,
  stopBeforeAttempt,
  finalState,
  INTERRUPTED,
  type AttemptResult,
} from './next-step.js';
