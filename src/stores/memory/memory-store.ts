import type {
  CompletedEntry,
  EntryVersion,
  InFlightEntry,
  LedgerEntry,
} from '../../ledger/ledger-entry.js';
import { OncelyError } from '../../contract/errors.js';
import { tombstoneOf } from '../../ledger/ledger-entry.js';
import type { LedgerStore, SweepResult } from '../../ledger/ledger-store.js';
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
 * Transactions run side by side with optimistic checks at commit (see `commit`); claims,
 * renewals and lookups never wait for them. A receipt is compare-and-swapped against
 * the owner token when its transaction commits, so a takeover during the effect wins.
 */
export function createMemoryStore(): MemoryStore {
  const ledger = new Map<string, LedgerEntry>();
  const tables = new Map<string, Map<string, unknown>>();
  /** Bumped at every commit that writes a row (`table\0id`) or a table: what optimistic checks compare. */
  const versions = new Map<string, number>();
  const slotVersion = (slot: string): number => versions.get(slot) ?? 0;

  const matches = (entry: LedgerEntry | undefined, v: EntryVersion): entry is LedgerEntry =>
    entry !== undefined && entry.token === v.token && entry.state === v.state;

  function table(name: string): Map<string, unknown> {
    let t = tables.get(name);
    if (!t) tables.set(name, (t = new Map()));
    return t;
  }

  class Transaction implements MemoryTx {
    readonly staged: Staged = new Map();
    readonly receipts: Array<[string, CompletedEntry]> = [];
    /** The committed versions this transaction read: a commit in between makes it a conflict. */
    readonly seen = new Map<string, number>();
    active = true;

    #saw(slot: string): void {
      if (!this.seen.has(slot)) this.seen.set(slot, slotVersion(slot));
    }

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
      this.#saw(`${name}\u0000${id}`);
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
      this.#saw(name);
      const ids = new Set([
        ...(tables.get(name)?.keys() ?? []),
        ...(this.staged.get(name)?.keys() ?? []),
      ]);
      return [...ids].flatMap((id) => {
        const v = this.get<T>(name, id);
        return v === undefined ? [] : [[id, v] as [string, T]];
      });
    }

    /**
     * Applies everything at once: nothing can run between these synchronous lines. Transactions
     * run side by side (none holds the store across its awaits); one that read a row or a table
     * another transaction has written since is refused whole (optimistic concurrency, like a
     * serialization failure), so two read-modify-writes never both apply.
     */
    commit(): void {
      for (const [slot, version] of this.seen) {
        if (slotVersion(slot) !== version)
          throw new OncelyError(
            'write_conflict',
            `memory store: ${slot.replace('\u0000', '/')} changed while this transaction ran; retry it`,
          );
      }
      for (const [id, entry] of this.receipts) {
        if (!matches(ledger.get(id), { ...entry, state: 'in_flight' })) {
          throw new OncelyError(
            'lease_lost',
            `memory store: key ${entry.key} was taken over before its receipt committed`,
          );
        }
      }
      for (const [name, staged] of this.staged) {
        const t = table(name);
        versions.set(name, slotVersion(name) + 1);
        for (const [id, v] of staged) {
          versions.set(`${name}\u0000${id}`, slotVersion(`${name}\u0000${id}`) + 1);
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

    durability: 'none',

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

    transaction(fn) {
      const tx = new Transaction();
      return fn(tx)
        .then((result) => {
          tx.commit();
          return result;
        })
        .finally(() => {
          tx.active = false;
        });
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
          .filter(([, e]) => (e.state === 'expired') === expired && e.expiresAt <= nowMs)
          .sort(([, a], [, b]) => a.expiresAt - b.expiresAt)
          .slice(0, limit);
      const live = due(false);
      for (const [id, entry] of live)
        ledger.set(id, tombstoneOf(entry as InFlightEntry | CompletedEntry, tombstoneMs));
      const old = due(true);
      for (const [id] of old) ledger.delete(id);
      return { tombstoned: live.length, deleted: old.length };
    },

    async backlog(nowMs) {
      let n = 0;
      for (const entry of ledger.values()) if (entry.expiresAt <= nowMs) n++;
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
