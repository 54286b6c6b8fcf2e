import type {
  CompletedEntry,
  EntryVersion,
  InFlightEntry,
  LedgerEntry,
} from '../../../ledger/ledger-entry.js';
import { DEFAULT_LEDGER_OPTIONS } from '../../../ledger/ledger-options.js';
import { refusingSqlHandle } from '../../../ledger/sql-handle.js';
import { tombstoneOf } from '../../../ledger/ledger-entry.js';
import {
  NO_CAPABILITIES,
  type LedgerStore,
  type SweepResult,
} from '../../../ledger/ledger-store.js';
import { TransactionEndedError } from '../../store-errors.js';
import { MemoryData, MemoryTransaction, type MemoryTx } from './memory-transaction.js';

export type { MemoryTx } from './memory-transaction.js';

export interface MemoryStore extends LedgerStore<MemoryTx> {
  /** A committed value, outside any transaction. */
  read<T>(table: string, id: string): T | undefined;
  /** Every committed (id, value) of a table. */
  entries<T>(table: string): Array<[string, T]>;
  /** Ledger entries held (any state): for tests and gauges. */
  readonly entryCount: number;
}

/**
 * A LedgerStore in process memory: for tests, demos and single-process tools. Values are
 * structured clones, so nothing a caller keeps can change what is stored.
 *
 * Transactions run side by side with optimistic checks at commit (see `commit`); claims,
 * renewals and lookups never wait for them. A receipt is compare-and-swapped against
 * the owner token when its transaction commits, so a takeover during the effect wins.
 */
export function createMemoryStore(): MemoryStore {
  const data = new MemoryData();
  const { ledger, tables } = data;
  const matches = (entry: LedgerEntry | undefined, v: EntryVersion): entry is LedgerEntry =>
    data.matches(entry, v);

  const store: MemoryStore = {
    name: 'memory',
    // Nothing between the effect and this store can fail: an effect's error is its own.
    isUnavailable: () => false,

    ready: async () => {},
    housekeep: async () => undefined,
    sql: () => refusingSqlHandle('memory'),
    tuning: {
      sweepBatchRows: DEFAULT_LEDGER_OPTIONS.sweepBatchRows,
      sweepStepMs: DEFAULT_LEDGER_OPTIONS.sweepStepMs,
    },

    get entryCount() {
      return ledger.size;
    },

    async get(scope, key) {
      const entry = ledger.get(rowId(scope, key));
      return entry === undefined ? undefined : structuredClone(entry);
    },

    durability: 'none',
    capabilities: NO_CAPABILITIES,

    async claim(entry: InFlightEntry) {
      const id = rowId(entry.scope, entry.key);
      const existing = ledger.get(id);
      if (existing !== undefined) return { won: false, existing: structuredClone(existing) };
      ledger.set(id, structuredClone(entry));
      return { won: true };
    },

    async swap(expected, next) {
      const id = rowId(expected.scope, expected.key);
      if (!matches(ledger.get(id), expected)) return false;
      ledger.set(id, structuredClone(next));
      return true;
    },

    async renew(expected, leaseExpiresAt) {
      const id = rowId(expected.scope, expected.key);
      const entry = ledger.get(id);
      if (!matches(entry, expected) || entry.state !== 'in_flight') return false;
      ledger.set(id, { ...entry, leaseExpiresAt });
      return true;
    },

    async remove(expected) {
      const id = rowId(expected.scope, expected.key);
      if (!matches(ledger.get(id), expected)) return false;
      ledger.delete(id);
      return true;
    },

    transaction: (fn) => inTransaction(data, fn),

    async complete(tx, expected, next) {
      const t = asTransaction(tx);
      const id = rowId(expected.scope, expected.key);
      if (!matches(ledger.get(id), expected)) return false;
      t.receipts.push([id, structuredClone(next)]);
      return true;
    },

    sweep: async (nowMs, tombstoneMs, limit = Infinity) =>
      sweepMemory(ledger, nowMs, tombstoneMs, limit),

    backlog: async (nowMs) => countExpired(ledger, nowMs),

    read<T>(name: string, id: string): T | undefined {
      const v = tables.get(name)?.get(id);
      return v === undefined ? undefined : (structuredClone(v) as T);
    },

    entries<T>(name: string): Array<[string, T]> {
      return [...(tables.get(name) ?? [])].map(([id, v]) => [id, structuredClone(v) as T]);
    },

    async close() {},
  };

  return store;
}

/** Runs `fn` in a new transaction, committed (its checks made) when `fn` resolves. */
function inTransaction<T>(data: MemoryData, fn: (tx: MemoryTx) => Promise<T>): Promise<T> {
  const tx = new MemoryTransaction(data);
  return fn(tx)
    .then((result) => {
      tx.commit();
      return result;
    })
    .finally(() => {
      tx.active = false;
    });
}

function asTransaction(tx: MemoryTx): MemoryTransaction {
  const t = tx as MemoryTransaction;
  if (!(t instanceof MemoryTransaction)) throw new TypeError('not a memory store transaction');
  if (!t.active) throw new TransactionEndedError('memory');
  return t;
}

/** How many entries have expired by `nowMs`: the sweep's backlog. */
function countExpired(ledger: ReadonlyMap<string, LedgerEntry>, nowMs: number): number {
  let n = 0;
  for (const entry of ledger.values()) if (entry.expiresAt <= nowMs) n++;
  return n;
}

/** One string per (scope, key); NUL cannot occur in a valid key, so the pair is unambiguous. */
function rowId(scope: string, key: string): string {
  return `${scope}\u0000${key}`;
}

/** One sweep step over the entries (LedgerStore.sweep): oldest first, at most `limit` of each kind. */
function sweepMemory(
  ledger: Map<string, LedgerEntry>,
  nowMs: number,
  tombstoneMs: number,
  limit: number,
): SweepResult {
  const due = (expired: boolean): Array<[string, LedgerEntry]> =>
    [...ledger]
      .filter(([, e]) => (e.state === 'expired') === expired && e.expiresAt <= nowMs)
      .sort(([, a], [, b]) => a.expiresAt - b.expiresAt)
      .slice(0, limit);
  const live = due(false);
  for (const [id, entry] of live)
    ledger.set(id, tombstoneOf(entry as InFlightEntry | CompletedEntry, tombstoneMs));
  const old = due(true);
  for (const [id] of old) ledger.delete(id);
  return { tombstoned: live.length, deleted: old.length };
}
