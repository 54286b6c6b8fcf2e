import type { DeferredEffect } from './deferred-writes.js';
import type { LedgerCore } from './ledger-claim.js';
import { deferredExecutor } from './ledger-deferred.js';
import { executeClaimed, type Effect } from './ledger-execute.js';
import { lookupKey } from './ledger-lookup.js';
import {
  resolveLedgerOptions,
  type LedgerOptions,
  type ResolvedLedgerOptions,
} from './ledger-options.js';
import type { ExecuteResult, LedgerRequest, LookupResult } from './ledger-result.js';
import type { LedgerStore, SweepResult } from './ledger-store.js';
import { createLedgerSweeper, type SweepProgress } from './ledger-sweeper.js';
import { LeaseHeartbeat } from './lease-heartbeat.js';
import { ReceiptCache } from './receipt-cache.js';
import { storeReady } from './store-ready.js';
import { sweepSteps } from './sweep-steps.js';

export type { Effect } from './ledger-execute.js';

export interface Ledger<Tx> {
  readonly store: LedgerStore<Tx>;
  readonly options: ResolvedLedgerOptions<Tx>;
  /**
   * Answers one request: claims its key, runs `effect` and writes the receipt in one store
   * transaction, or answers from what the key already holds. Never throws for the store's sake
   * (that is `unavailable`); rethrows the effect's own error after rolling it back and
   * releasing the key. Throws InvalidKeyError / InvalidOptionError for a malformed request.
   */
  execute(request: LedgerRequest, effect: Effect<Tx>): Promise<ExecuteResult>;
  /**
   * Answers one request whose effect defers its writes and does nothing else (deferred-writes.ts).
   * On a store that commits them at once (PostgreSQL), the effect runs first, without a claim or
   * a lease, and its receipt and writes commit in one transaction if the key is still free; a
   * concurrent duplicate's effect runs too, but its writes never commit and it answers as a
   * replay. When the key has a row, and on other stores, it goes the claimed way of `execute`,
   * the writes run in the claimed transaction.
   */
  executeDeferred(request: LedgerRequest, effect: DeferredEffect<Tx>): Promise<ExecuteResult>;
  /** The read-only status lookup by (scope, key). Purges what it finds expired. */
  lookup(scope: string, key: string): Promise<LookupResult>;
  /**
   * Turns receipts past retention into tombstones and deletes old tombstones, in bounded steps
   * (sweepBatchRows each, sweepPauseMs apart). Aborting `signal` stops between two steps; the
   * next call resumes at the oldest row still due. Then deletes the steps whose key's retention
   * ended (`steps` in the result), when the ledger keeps steps.
   */
  purgeExpired(signal?: AbortSignal): Promise<SweepResult>;
  /** The current or last purge: rows left, rows done, steps taken (a plain getter for gauges). */
  sweepProgress(): SweepProgress;
  /**
   * Opens the store and sets up its table now; rejects with a `store_unavailable` OncelyError
   * naming the cause (bad path, bad URL, server down). Await it before listening.
   */
  ready(): Promise<void>;
}

/** A ledger over `options.store`: the claimed way, the deferred way, lookups and the sweep. */
export function createLedger<Tx>(options: LedgerOptions<Tx>): Ledger<Tx> {
  const o = resolveLedgerOptions(options);
  const { store, clock } = o;
  const core: LedgerCore<Tx> = {
    o,
    receipts: new ReceiptCache(o.receiptCacheBytes),
    keepWritten: store.capabilities.deferredCommit !== undefined,
  };
  const heartbeat = new LeaseHeartbeat(store, clock, o.heartbeatMs, o.leaseMs);
  const execute = (request: LedgerRequest, effect: Effect<Tx>): Promise<ExecuteResult> =>
    executeClaimed(core, heartbeat, request, effect);
  const sweeper = createLedgerSweeper({
    store,
    clock,
    tombstoneMs: o.tombstoneMs,
    batchRows: o.sweepBatchRows,
    stepMs: o.sweepStepMs,
    pauseMs: o.sweepPauseMs,
  });
  return {
    store,
    options: o,
    execute,
    executeDeferred: deferredExecutor(core, execute),
    lookup: (scope, key) => lookupKey(core, scope, key),
    purgeExpired: async (signal) => {
      const swept = await sweeper.run(signal);
      if (o.steps === undefined) return swept;
      const { sweepBatchRows, sweepPauseMs } = o;
      const steps = await sweepSteps(o.steps, clock, sweepBatchRows, sweepPauseMs, signal);
      return { ...swept, steps };
    },
    sweepProgress: () => sweeper.progress,
    ready: async () => {
      await storeReady(store);
      if (o.steps !== undefined) await storeReady(o.steps, 'step store');
    },
  };
}
