import type { CompletedEntry, EntryVersion, InFlightEntry, LedgerEntry } from './ledger-entry.js';
import type { DeferredCommit } from './deferred-writes.js';
import type { SqlHandle } from './sql-handle.js';

/** What one sweep did (see {@link LedgerStore.sweep}). */
export interface SweepResult {
  /** Entries whose retention ended and that became tombstones. */
  readonly tombstoned: number;
  /** Tombstones past their own end, deleted. */
  readonly deleted: number;
  /**
   * True when the step stopped early because another process or request held a lock it needed
   * (the SQLite file's write lock; PostgreSQL's lock on the receipts table to drop a partition):
   * the sweep tries again after a pause instead of holding up requests behind the lock. The
   * counts say what it did before that.
   */
  readonly busy?: boolean;
  /** Steps deleted with their key's end (a ledger with a step store, docs/steps.md). */
  readonly steps?: number;
}

/** How a store's sweep is paced by default (LedgerTuning's sweepBatchRows and sweepStepMs). */
export interface StoreTuning {
  /**
   * The sweep step, in rows: small where a step holds a lock other processes wait on (SQLite),
   * larger where steps do not block writers.
   */
  readonly sweepBatchRows: number;
  /** The time a sweep step should take, in ms. */
  readonly sweepStepMs: number;
}

/**
 * What a claim found: the key was free and is now this worker's, or the committed entry that
 * holds it (undefined when that entry vanished while claiming: read again).
 */
export type ClaimAttempt =
  | { readonly won: true }
  | { readonly won: false; readonly existing: LedgerEntry | undefined };

/**
 * How much of what a store acknowledged survives a crash (docs/durability.md):
 * - durable: a power cut or an OS crash (SQLite synchronous = FULL, PostgreSQL synchronous commit);
 * - process: a crash or SIGKILL of the process, not a power cut (SQLite synchronous = NORMAL in
 *   WAL, PostgreSQL synchronous_commit = off): what Redis-based middlewares offer with their
 *   default once-a-second fsync; the last moments may be lost on power loss.
 */
/**
 * What a store does beyond the contract, declared by the store: the ledger reads it once, never
 * probes for a method (docs/design.md, "Stores: one path each").
 */
export interface StoreCapabilities {
  /**
   * Commits a deferred effect's receipt and writes at once, without a claim (deferred-writes.ts):
   * on PostgreSQL and the ORM stores (theirs ends the effect's own transaction). Undefined
   * elsewhere: a deferred route runs the claimed way there.
   */
  readonly deferredCommit: DeferredCommit | undefined;
  /**
   * Runs one data-changing statement (`$1` placeholders) on its own and resolves with the rows it
   * returned once it is committed at the store's durability. A single statement is atomic, so it
   * needs no transaction around it: PostgreSQL sends it alone (one round trip, no BEGIN and
   * COMMIT), SQLite writes it into the open group-commit batch (no savepoint), an ORM store
   * sends it through its executor's own query (orm-commit-alone.ts). Undefined on memory: a
   * caller runs the statement in `transaction` there. The steps' records use it
   * (stores/ledger/steps/sql-step-store.ts).
   */
  readonly commitAlone: CommitAlone | undefined;
  /**
   * True when `tx`, a transaction of this store, has begun and holds the store's only writer
   * until it ends (SQLite): a statement committed on its own meanwhile would wait for it, so a
   * step called after the request's own statements would wait forever. The step runner refuses
   * such a step (`step_after_writes`). Absent where transactions run side by side.
   */
  readonly holdsWriter?: ((tx: unknown) => boolean) | undefined;
}

/** See {@link StoreCapabilities.commitAlone}. */
export type CommitAlone = (
  sql: string,
  params: readonly unknown[],
) => Promise<Record<string, unknown>[]>;

/** A store that does nothing beyond the contract (memory, SQLite). */
export const NO_CAPABILITIES: StoreCapabilities = Object.freeze({
  deferredCommit: undefined,
  commitAlone: undefined,
});

export const DURABILITIES = ['durable', 'process'] as const;
export type Durability = (typeof DURABILITIES)[number];

/**
 * Where a ledger keeps its entries, and the transaction the effect runs in. A store is dumb on
 * purpose: it reads, claims and compare-and-swaps rows; every rule (conflict first, lease,
 * retention) lives in the ledger, so all stores behave alike and one conformance suite checks
 * them (docs/design.md, habit 5).
 *
 * `Tx` is the handle the effect gets for its own writes: they commit or roll back together with
 * the receipt. Methods that take a `tx` run inside {@link transaction}; the others commit on
 * their own, or with the next group commit (a claim must be visible to every worker of the
 * process before the effect starts, and to other processes within a commit).
 *
 * No store holds a connection or a lock across the effect's awaits before the effect's first
 * statement: a transaction begins lazily, so an effect that first awaits an HTTP call does not
 * stop other keys. Reads never queue behind a running effect.
 *
 * Every method may reject when the backing database is unreachable; the ledger turns that into
 * an `unavailable` result and never runs the effect unguarded.
 */
export interface LedgerStore<Tx> {
  /** For messages and test names: 'memory', 'sqlite', 'postgres'. */
  readonly name: string;
  /** What an acknowledged write survives (memory: nothing past the process). */
  readonly durability: Durability | 'none';
  /** What it does beyond this contract, declared (NO_CAPABILITIES for none). */
  readonly capabilities: StoreCapabilities;

  /** The committed entry for (scope, key), whatever its state or age, or undefined. Never waits for a writer. */
  get(scope: string, key: string): Promise<LedgerEntry | undefined>;

  /**
   * Lookup and claim in one step: adds `entry` when (scope, key) has no row, or returns the
   * committed row that is there (whatever its state). The entry that is there is only answered
   * once committed, so a replay never answers from a receipt that could still be lost.
   */
  claim(entry: InFlightEntry): Promise<ClaimAttempt>;

  /**
   * Replaces the row matching `expected` (same scope, key, token and state) with `next`.
   * False when the row changed or is gone.
   */
  swap(expected: EntryVersion, next: LedgerEntry): Promise<boolean>;

  /** Moves the lease of the in-flight row matching `expected` to `leaseExpiresAt` (the heartbeat). False when it is not ours any more. */
  renew(expected: EntryVersion, leaseExpiresAt: number): Promise<boolean>;

  /** Deletes the row matching `expected`. False when it changed or is gone. */
  remove(expected: EntryVersion): Promise<boolean>;

  /**
   * Runs `fn` in one transaction: commits when it resolves, rolls back when it rejects, then
   * settles the same way. The transaction begins at the handle's first statement (or at
   * {@link complete}), not before: see each store's `Tx` for how its statements join it.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;

  /**
   * Inside the transaction, after the effect: writes the completed entry (the receipt) in place
   * of the in-flight row matching `expected`, in the effect's transaction (`next` is that entry
   * completed: the same scope, key, fingerprint, token and first sighting). False when another
   * worker owns the key now; then the ledger rolls the effect back. It is the transaction's last
   * statement: a store may end the transaction with it (PostgreSQL reads the receipt's row, then
   * sends COMMIT or ROLLBACK), and then false means the effect has been rolled back already.
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

  /** The sweep's pace on this store, when the ledger is not told one (LedgerTuning). */
  readonly tuning: StoreTuning;

  /** How many entries and tombstones a sweep at `nowMs` still has to handle (its rows left). */
  backlog(nowMs: number): Promise<number>;

  /**
   * Upkeep after a sweep that changed something, bounded like one sweep step (SQLite:
   * statistics, incremental vacuum, WAL checkpoint; nothing elsewhere). Its failure is reported
   * like a sweep's.
   */
  housekeep(): Promise<unknown>;

  /**
   * Opens the connection and sets up the ledger's table now, rejecting when the database cannot
   * be reached or opened: `ledger.ready()` calls it before a server listens. A store that opens
   * nothing resolves at once.
   */
  ready(): Promise<void>;

  /**
   * The dialect-neutral SQL handle over a transaction handle of this store (`context.sql` in the
   * HTTP middleware). On a store that is not a SQL database (memory) every call of the handle
   * rejects with a `no_sql` error (refusingSqlHandle, sql-handle.ts).
   */
  sql(tx: Tx): SqlHandle;

  /**
   * True when `error`, thrown inside this store's transaction (by an effect's
   * statement), says the database failed rather than the statement: the connection ended, the
   * disk is full. The ledger then answers `unavailable` (503 + Retry-After), as it does when the
   * claim or the commit fails that way, instead of passing the error on as the effect's own (500).
   */
  isUnavailable(error: unknown): boolean;

  /** Releases what the store opened itself (a connection made by a factory). Idempotent. */
  close(): Promise<void>;
}
