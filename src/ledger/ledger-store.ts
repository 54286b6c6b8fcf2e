import type { CompletedEntry, EntryVersion, InFlightEntry, LedgerEntry } from './ledger-entry.js';
import type { SqlHandle } from './sql-handle.js';

/** What one sweep did (see {@link LedgerStore.sweep}). */
export interface SweepResult {
  /** Entries whose retention ended and that became tombstones. */
  readonly tombstoned: number;
  /** Tombstones past their own end, deleted. */
  readonly deleted: number;
  /**
   * True when the step did nothing because another process held the write lock (SQLite): the
   * sweep waits for its next turn instead of holding up this process's requests behind the lock.
   */
  readonly busy?: boolean;
}

/**
 * Where a ledger keeps its entries, and the transaction the effect runs in. A store is dumb on
 * purpose: it reads, inserts and compare-and-swaps rows; every rule (conflict first, lease,
 * retention) lives in the ledger, so all stores behave alike and one conformance suite checks
 * them (docs/design.md, habit 5).
 *
 * `Tx` is the handle the effect gets for its own writes: they commit or roll back together with
 * the receipt. Methods that take a `tx` run inside {@link transaction}; the others commit on
 * their own (a claim must be visible to other workers before the effect starts).
 *
 * Every method may reject when the backing database is unreachable; the ledger turns that into
 * an `unavailable` result and never runs the effect unguarded.
 */
export interface LedgerStore<Tx> {
  /** For messages and test names: 'memory', 'sqlite', 'postgres'. */
  readonly name: string;

  /** The committed entry for (scope, key), whatever its state or age, or undefined. */
  get(scope: string, key: string): Promise<LedgerEntry | undefined>;

  /** Adds the entry if (scope, key) has none. False when one exists (whatever its state). */
  insert(entry: InFlightEntry): Promise<boolean>;

  /**
   * Replaces the row matching `expected` (same scope, key, token and state) with `next`.
   * False when the row changed or is gone. Waits for a transaction that holds the row.
   */
  swap(expected: EntryVersion, next: LedgerEntry): Promise<boolean>;

  /** Deletes the row matching `expected`. False when it changed or is gone. */
  remove(expected: EntryVersion): Promise<boolean>;

  /**
   * Runs `fn` in one transaction: commits when it resolves, rolls back when it rejects, then
   * settles the same way. Stores whose connection cannot interleave transactions (one
   * better-sqlite3 connection) queue them, so two async effects never share one.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;

  /**
   * Inside a transaction, before the effect: true when the row still matches `expected`, and
   * from then on no other worker can take it over until the transaction ends (PostgreSQL:
   * SELECT ... FOR UPDATE).
   */
  hold(tx: Tx, expected: EntryVersion): Promise<boolean>;

  /**
   * Inside the same transaction, after the effect: writes the completed entry (the receipt) in
   * place of the in-flight row matching `expected`. False when another worker owns the key now.
   */
  complete(tx: Tx, expected: EntryVersion, next: CompletedEntry): Promise<boolean>;

  /**
   * One bounded step of retention, against `nowMs`, in one short transaction: at most `limit`
   * in_flight or completed entries with expiresAt <= nowMs become tombstones (state expired,
   * receipt dropped, expiredAt = its old expiresAt, expiresAt = expiredAt + tombstoneMs), oldest
   * first; and at most `limit` tombstones with expiresAt <= nowMs are deleted (a store may drop
   * them in whole time partitions instead, and count what it dropped). Progress lives in the data,
   * so a sweep interrupted between steps resumes at the oldest entry still due. The ledger's
   * sweeper ({@link createLedgerSweeper}) calls this in a loop, yielding between steps.
   * @default limit unbounded (everything due, in one transaction)
   */
  sweep(nowMs: number, tombstoneMs: number, limit?: number): Promise<SweepResult>;

  /**
   * The sweep step this store prefers, in rows, when the ledger is not told one: small where a
   * step holds a lock other processes wait on (SQLite), larger where steps do not block writers.
   */
  readonly sweepBatchRows?: number;

  /** How many entries and tombstones a sweep at `nowMs` still has to handle (its rows left). */
  backlog(nowMs: number): Promise<number>;

  /**
   * Optional upkeep after a sweep that changed something, bounded like one sweep step (SQLite:
   * statistics, incremental vacuum, WAL checkpoint). Its failure is reported like a sweep's.
   */
  housekeep?(): Promise<unknown>;

  /**
   * Opens the connection and sets up the ledger's table now, rejecting when the database cannot
   * be reached or opened: `ledger.ready()` calls it before a server listens. Optional for stores
   * that open nothing; the ledger then reads one key instead.
   */
  ready?(): Promise<void>;

  /**
   * The dialect-neutral SQL handle over a transaction handle of this store (`context.sql` in the
   * HTTP middleware). Absent on stores that are not SQL databases (memory).
   */
  sql?(tx: Tx): SqlHandle;

  /** Releases what the store opened itself (a connection made by a factory). Idempotent. */
  close(): Promise<void>;
}
