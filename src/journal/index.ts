/** The sender's journal: durable intents, their attempts and outcomes, and the outbox worker. */
export * from './intent.js';
export type { JournalStore, IntentFilter, Reopening } from './journal-store.js';
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
  createOutboxWorker,
  DEFAULT_OUTBOX_WORKER_OPTIONS,
  type OutboxWorker,
  type OutboxWorkerOptions,
  type PassResult,
  type SettledEvent,
} from './outbox-worker.js';
export {
  settleAttempt,
  stopBeforeAttempt,
  finalState,
  INTERRUPTED,
  type AttemptResult,
} from './next-step.js';
export { formatIntentLine, formatIntentReport, formatAttemptEntry } from './format-intent.js';
