/**
 * The receipt logic of oncely: (scope, key, fingerprint) -> executed once, replayed, conflict,
 * in flight. Knows nothing of HTTP or of any database: stores implement {@link LedgerStore}.
 *
 * ```ts
 * const ledger = createLedger({ store: createMemoryStore(), clock, leaseMs: 30_000 });
 * const result = await ledger.execute({ scope: caller, key: requestId, fingerprint: fingerprint(command) },
 *   (tx) => { tx.set('notes', id, next); return jsonReceipt(200, { version: next.version }); });
 * switch (result.kind) {
 *   case 'executed': case 'replayed': return receiptJson(result.receipt);
 *   case 'conflict': ...   // the request ID was used for another command
 *   case 'in_flight': ...  // come back in result.retryAfterMs
 *   ...
 * }
 * const status = await ledger.lookup(caller, requestId); // found | in_flight | expired | never_seen
 * ```
 */
export { createLedger, type Ledger, type Effect } from './ledger.js';
export {
  resolveLedgerOptions,
  isBusinessAnswer,
  DEFAULT_LEDGER_OPTIONS,
  type LedgerOptions,
  type LedgerTuning,
  type ResolvedLedgerOptions,
} from './ledger-options.js';
export {
  EXECUTE_KINDS,
  LOOKUP_KINDS,
  type Claim,
  type ExecuteKind,
  type ExecuteResult,
  type LedgerRequest,
  type LookupKind,
  type LookupResult,
} from './ledger-result.js';
export {
  NO_CAPABILITIES,
  type Durability,
  type LedgerStore,
  type StoreCapabilities,
  type StoreTuning,
  type SweepResult,
} from './ledger-store.js';
export type {
  DeferredCommit,
  DeferredEffect,
  DeferredOutcome,
  DeferredWrite,
} from './deferred-writes.js';
export {
  SQL_DIALECTS,
  type CarriesSqlHandle,
  type SqlDialect,
  type SqlHandle,
  type SqlRunResult,
} from './sql-handle.js';
export {
  createLedgerSweeper,
  type LedgerSweeper,
  type LedgerSweeperOptions,
  type SweepProgress,
} from './ledger-sweeper.js';
export {
  ENTRY_STATES,
  versionOf,
  tombstoneOf,
  type EntryState,
  type EntryVersion,
  type LedgerEntry,
  type InFlightEntry,
  type CompletedEntry,
  type ExpiredEntry,
} from './ledger-entry.js';
export {
  decideClaim,
  TAKE_OVER_REASONS,
  type ClaimDecision,
  type TakeOverReason,
} from './decide-claim.js';
export { normalizeReceipt } from './normalize-receipt.js';
export { observeLedger, type LedgerDecision, type LedgerObserver } from './observe-ledger.js';
export { ledgerSpanEvents, LEDGER_SPAN_EVENT } from './ledger-span-events.js';
export { jsonReceipt, receiptJson } from './receipt-json.js';
export type { Receipt } from '../contract/receipt.js';
export { StepMismatchError, isStepMismatchError } from './step-errors.js';
export type { Step, StepContext } from './steps.js';
export type { StepRecord, StepStore } from './step-store.js';
