import type { CompletedEntry, EntryVersion, InFlightEntry, LedgerEntry } from '../../ledger/ledger-entry.js';
import { tombstoneOf } from '../../ledger/ledger-entry.js';
import type { LedgerStore, SweepResult } from '../../ledger/ledger-store.js';
import { AsyncMutex } from '../async-mutex.js';
import { TransactionEndedError } from '../store-errors.js';

/**
 * The memory store's transaction handle: a small table/id -> value space for the effect's own
 * writes. Writes are staged and applied with the receipt at commit, or dropped at rollback, so
 * the memory store keeps the same all-or-nothing promise as the database stores.
 */
export interface MemoryTx {
  /** The value as this transaction sees it: its own staged writes first, then committed data. */
  get<T>(table: string, id: string): T | undefined;
  set(table: string, id: string, value: unknown): void;
  /** True when there was a value to delete. */
  delete(table: string, id: string): boolean;
  /** Every (id, value) of a table as this transaction sees it. */
  entries<T>(table: string): Array<[string, T]>;
}

export interface MemoryStore extends LedgerStore<MemoryTx> {
  /** A committed value, outside any transaction. */
  read<T>(table: string, id: string): T | undefined;
  /** Every committed (id, value) of a table. */
  entries<T>(table: string): Array<[string, T]>;
  /** Ledger entries held (any state): for tests and gauges. */
  readonly entryCount: number;
}

const DELETED = Symbol('deleted');
type Staged = Map<string, Map<string, unknown>>;

/**
 * A LedgerStore in process memory: for tests, demos and single-process tools. Values are
 * structured clones, so nothing a caller keeps can change what is stored.
 *
 * Transactions run one at a time (a mutex), which gives them the isolation a database would.
 * Claims do not wait for them; but a row held by a running transaction (see `hold`) cannot be
 * swapped or removed until that transaction ends, like a PostgreSQL row lock.
 */
export function createMemoryStore(): MemoryStore {
  const ledger = new Map<string, LedgerEntry>();
  const tables = new Map<string, Map<string, unknown>>();
  const rowLocks = new Map<string, Promise<void>>();
  const mutex = new AsyncMutex();

  const matches = (entry: LedgerEntry | undefined, v: EntryVersion): entry is LedgerEntry =>
    entry !== undefined && entry.token === v.token && entry.state === v.state;

  async function unlocked(id: string): Promise<void> {
    for (let lock = rowLocks.get(id); lock; lock = rowLocks.get(id)) await lock;
  }

  function table(name: string): Map<string, unknown> {
    let t = tables.get(name);
    if (!t) tables.set(name, (t = new Map()));
    return t;
  }

  class Transaction implements MemoryTx {
    readonly staged: Staged = new Map();
    readonly receipts: Array<[string, CompletedEntry]> = [];
    active = true;

    /** `done` settles when the transaction ends: the row locks it takes are released with it. */
    constructor(readonly done: Promise<void>) {}

    #check(): void {
      if (!this.active) throw new TransactionEndedError('memory');
    }

    get<T>(name: string, id: string): T | undefined {
      this.#check();
      const staged = this.staged.get(name);
      if (staged?.has(id)) {
        const v = staged.get(id);
        return v === DELETED ? undefined : (structuredClone(v) as T);
      }
      const v = tables.get(name)?.get(id);
      return v === undefined ? undefined : (structuredClone(v) as T);
    }

    set(name: string, id: string, value: unknown): void {
      this.#check();
      let staged = this.staged.get(name);
      if (!staged) this.staged.set(name, (staged = new Map()));
      staged.set(id, structuredClone(value));
    }

    delete(name: string, id: string): boolean {
      const existed = this.get(name, id) !== undefined;
      this.set(name, id, undefined);
      this.staged.get(name)!.set(id, DELETED);
      return existed;
    }

    entries<T>(name: string): Array<[string, T]> {
      this.#check();
      const ids = new Set([...(tables.get(name)?.keys() ?? []), ...(this.staged.get(name)?.keys() ?? [])]);
      return [...ids].flatMap((id) => {
        const v = this.get<T>(name, id);
        return v === undefined ? [] : [[id, v] as [string, T]];
      });
    }

    /** Applies everything at once: nothing can run between these synchronous lines. */
    commit(): void {
      for (const [name, staged] of this.staged) {
        const t = table(name);
        for (const [id, v] of staged) {
          if (v === DELETED) t.delete(id);
          else t.set(id, v);
        }
      }
      for (const [id, entry] of this.receipts) ledger.set(id, entry);
    }
  }

  const store: MemoryStore = {
    name: 'memory',

    ready: async () => {},

    get entryCount() {
      return ledger.size;
    },

    async get(scope, key) {
      const entry = ledger.get(rowId(scope, key));
      return entry === undefined ? undefined : structuredClone(entry);
    },

    async insert(entry: InFlightEntry) {
      const id = rowId(entry.scope, entry.key);
      if (ledger.has(id)) return false;
      ledger.set(id, structuredClone(entry));
      return true;
    },

    async swap(expected, next) {
      const id = rowId(expected.scope, expected.key);
      await unlocked(id);
      if (!matches(ledger.get(id), expected)) return false;
      ledger.set(id, structuredClone(next));
      return true;
    },

    async remove(expected) {
      const id = rowId(expected.scope, expected.key);
      await unlocked(id);
      if (!matches(ledger.get(id), expected)) return false;
      ledger.delete(id);
      return true;
    },

    transaction(fn) {
      return mutex.run(async () => {
        let ended!: () => void;
        const done = new Promise<void>((resolve) => {
          ended = resolve;
        });
        const tx = new Transaction(done);
        try {
          const result = await fn(tx);
          tx.commit();
          return result;
        } finally {
          tx.active = false;
          for (const [id, lock] of rowLocks) if (lock === done) rowLocks.delete(id);
          ended();
        }
      });
    },

    async hold(tx, expected) {
      const t = asTransaction(tx);
      const id = rowId(expected.scope, expected.key);
      await unlocked(id);
      if (!matches(ledger.get(id), expected)) return false;
      rowLocks.set(id, t.done);
      return true;
    },

    async complete(tx, expected, next) {
      const t = asTransaction(tx);
      const id = rowId(expected.scope, expected.key);
      if (!matches(ledger.get(id), expected)) return false;
      t.receipts.push([id, structuredClone(next)]);
      return true;
    },

    async sweep(nowMs, tombstoneMs, limit = Infinity): Promise<SweepResult> {
      const due = (expired: boolean): Array<[string, LedgerEntry]> =>
        [...ledger]
          .filter(([id, e]) => (e.state === 'expired') === expired && e.expiresAt <= nowMs && !rowLocks.has(id))
          .sort(([, a], [, b]) => a.expiresAt - b.expiresAt)
          .slice(0, limit);
      const live = due(false);
      for (const [id, entry] of live) ledger.set(id, tombstoneOf(entry as InFlightEntry | CompletedEntry, tombstoneMs));
      const old = due(true);
      for (const [id] of old) ledger.delete(id);
      return { tombstoned: live.length, deleted: old.length };
    },

    async backlog(nowMs) {
      let n = 0;
      for (const [id, entry] of ledger) if (entry.expiresAt <= nowMs && !rowLocks.has(id)) n++;
      return n;
    },

    read<T>(name: string, id: string): T | undefined {
      const v = tables.get(name)?.get(id);
      return v === undefined ? undefined : (structuredClone(v) as T);
    },

    entries<T>(name: string): Array<[string, T]> {
      return [...(tables.get(name) ?? [])].map(([id, v]) => [id, structuredClone(v) as T]);
    },

    async close() {},
  };

  function asTransaction(tx: MemoryTx): Transaction {
    const t = tx as Transaction;
    if (!(t instanceof Transaction)) throw new TypeError('not a memory store transaction');
    if (!t.active) throw new TransactionEndedError('memory');
    return t;
  }

  return store;
}

/** One string per (scope, key); NUL cannot occur in a valid key, so the pair is unambiguous. */
function rowId(scope: string, key: string): string {
  return `${scope}\u0000${key}`;
}
