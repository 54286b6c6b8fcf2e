import { OncelyError } from '../contract/errors.js';
import type { Receipt } from '../contract/receipt.js';
import type { CompletedEntry } from './ledger-entry.js';
import type { Claim } from './ledger-result.js';
import type { SqlHandle } from './sql-handle.js';

/**
 * A write an effect leaves for the commit: it runs after the effect has answered, in the same
 * transaction as the receipt, in the order deferred. Its result is never seen by the effect.
 */
export interface DeferredWrite {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** What a deferred effect answers: its receipt, and the writes that commit with it. */
export interface DeferredOutcome {
  readonly receipt: Receipt;
  readonly writes: readonly DeferredWrite[];
}

/**
 * An effect that writes only through deferred writes and has no other side effect: it may run
 * for a duplicate that then loses the key (its writes never commit), so that the first request
 * needs no lease, and on PostgreSQL its receipt and writes commit in one transaction shared with
 * concurrent requests. On a store whose deferred commit ends the effect's own transaction (the
 * ORM stores, {@link DeferredCommit.inTransaction}) it also gets that transaction's handle, `tx`,
 * and may write through it, awaiting results: those writes commit with its receipt or not at
 * all. Elsewhere `tx` is undefined.
 */
export type DeferredEffect<Tx = unknown> = (
  claim: Claim,
  tx: Tx | undefined,
) => DeferredOutcome | Promise<DeferredOutcome>;

/** A deferred write that failed at commit: the effect's own error (a constraint, a typo), not the store's. */
export class DeferredWriteError extends OncelyError {
  constructor(write: DeferredWrite, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('deferred_write_failed', `a deferred write failed at commit (${write.sql}): ${reason}`, {
      cause,
    });
    this.name = 'DeferredWriteError';
  }
}

/** Runs `writes` in order through `sql` (inside the ledger's transaction); a failure is the effect's. */
export async function runDeferredWrites(
  sql: SqlHandle,
  writes: readonly DeferredWrite[],
): Promise<void> {
  for (const write of writes) {
    try {
      await sql.run(write.sql, write.params);
    } catch (error) {
      throw new DeferredWriteError(write, error);
    }
  }
}

/**
 * The deferred commit a store may declare (StoreCapabilities.deferredCommit): commits a deferred
 * effect's completed entry and its writes in one transaction, without a claim, when (scope, key)
 * has no row: true. False when it has one (in any state): nothing was written, and the ledger
 * goes the claimed way. Rejects with DeferredWriteError when a write failed (rolled back).
 *
 * PostgreSQL's store and the ORM stores declare it. Why it is kept: on PostgreSQL's store a
 * claimed request costs a claim statement, BEGIN with the first write, the receipt and COMMIT,
 * while deferred requests commit their rows and writes together, many requests to one transaction and one WAL flush
 * (postgres-deferred-groups.ts); at 10 connections that measured about twice the claimed path's
 * throughput (bench/ledger, docs/performance.md). On an ORM store the effect's transaction ends
 * with the row instead of beginning after a claim committed alone: one commit per request (one
 * fsync on SQLite) instead of two, and one statement less (bench/orm, docs/orm.md). On the
 * built-in SQLite store and memory a deferred effect simply runs the claimed way: their group
 * commit already shares the flush, and they have no round trip to save.
 */
export interface DeferredCommit {
  (entry: CompletedEntry, writes: readonly DeferredWrite[]): Promise<boolean>;
  /**
   * The same commit at the end of a transaction the effect ran in (the ORM stores, whose handle
   * the route writes through). Undefined where the effect runs apart from any transaction
   * (PostgreSQL's store, whose commits are grouped).
   */
  readonly inTransaction?: DeferredCommitInTransaction;
}

/** See {@link DeferredCommit.inTransaction}. */
export interface DeferredCommitInTransaction {
  /**
   * Before the transaction: makes ready what a row first seen at `firstSeenAt` needs (PostgreSQL:
   * its time partition), so that `commit` fails only when the key has a row. Usually at once.
   */
  prepare(firstSeenAt: number): Promise<void>;
  /**
   * Inside `tx`, a handle of the store's `transaction`, after the effect and its deferred writes:
   * adds `entry`'s row when (scope, key) has none, as the transaction's last statement: true.
   * False when the key has a row: nothing was added, and the ledger rolls the transaction back.
   */
  commit(tx: unknown, entry: CompletedEntry): Promise<boolean>;
}
