import { OncelyError } from '../../../contract/errors.js';
import type { CompletedEntry, EntryVersion, LedgerEntry } from '../../../ledger/ledger-entry.js';
import { TransactionEndedError } from '../../store-errors.js';

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

/** What a memory store holds, shared by the store and its transactions. */
export class MemoryData {
  readonly ledger = new Map<string, LedgerEntry>();
  readonly tables = new Map<string, Map<string, unknown>>();
  /** Bumped at every commit that writes a row (`table\0id`) or a table: what optimistic checks compare. */
  readonly versions = new Map<string, number>();

  slotVersion(slot: string): number {
    return this.versions.get(slot) ?? 0;
  }

  matches(entry: LedgerEntry | undefined, v: EntryVersion): entry is LedgerEntry {
    return entry !== undefined && entry.token === v.token && entry.state === v.state;
  }

  table(name: string): Map<string, unknown> {
    let t = this.tables.get(name);
    if (!t) this.tables.set(name, (t = new Map()));
    return t;
  }
}

const DELETED = Symbol('deleted');
type Staged = Map<string, Map<string, unknown>>;

export class MemoryTransaction implements MemoryTx {
  constructor(private readonly data: MemoryData) {}

  readonly staged: Staged = new Map();
  readonly receipts: Array<[string, CompletedEntry]> = [];
  /** The committed versions this transaction read: a commit in between makes it a conflict. */
  readonly seen = new Map<string, number>();
  active = true;

  #saw(slot: string): void {
    if (!this.seen.has(slot)) this.seen.set(slot, this.data.slotVersion(slot));
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
    const v = this.data.tables.get(name)?.get(id);
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
      ...(this.data.tables.get(name)?.keys() ?? []),
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
      if (this.data.slotVersion(slot) !== version)
        throw new OncelyError(
          'write_conflict',
          `memory store: ${slot.replace('\u0000', '/')} changed while this transaction ran; retry it`,
        );
    }
    for (const [id, entry] of this.receipts) {
      if (!this.data.matches(this.data.ledger.get(id), { ...entry, state: 'in_flight' })) {
        throw new OncelyError(
          'lease_lost',
          `memory store: key ${entry.key} was taken over before its receipt committed`,
        );
      }
    }
    for (const [name, staged] of this.staged) {
      const t = this.data.table(name);
      this.data.versions.set(name, this.data.slotVersion(name) + 1);
      for (const [id, v] of staged) {
        this.data.versions.set(
          `${name}\u0000${id}`,
          this.data.slotVersion(`${name}\u0000${id}`) + 1,
        );
        if (v === DELETED) t.delete(id);
        else t.set(id, v);
      }
    }
    for (const [id, entry] of this.receipts) this.data.ledger.set(id, entry);
  }
}
