import type { CompletedEntry, EntryVersion } from '../../../ledger/ledger-entry.js';
import type { LedgerStore } from '../../../ledger/ledger-store.js';
import type { PostgresLedgerTables } from '../postgres/postgres-tombstones.js';
import type { ExecutorRows } from '../../orm/sql-executor.js';

/**
 * A ledger's SQL for one database, run on an executor: what differs between PostgreSQL and SQLite.
 * What every executor store shares (the ORM's transaction, the SQL handle, unavailability) is in
 * orm-ledger-store.ts.
 */
export interface ExecutorLedger
  extends Pick<
    LedgerStore<unknown>,
    | 'tuning'
    | 'ready'
    | 'get'
    | 'claim'
    | 'swap'
    | 'renew'
    | 'remove'
    | 'sweep'
    | 'backlog'
    | 'housekeep'
  > {
  /** The receipt in `tx` (the request's transaction); true when it replaced the in-flight row. */
  complete(tx: InTransaction, expected: EntryVersion, next: CompletedEntry): Promise<boolean>;
  /**
   * The deferred commit's row in `tx`, its last statement (DeferredCommit.inTransaction): adds
   * `entry` when its key has no row, true; false when it has one (or the row cannot go in now,
   * a partition missing), and the ledger then rolls back and goes the claimed way.
   */
  commitDeferred(tx: InTransaction, entry: CompletedEntry): Promise<boolean>;
  /** Before a transaction that will end with a row first seen at `firstSeenAt`: its partition made (PostgreSQL). */
  placeRow(firstSeenAt: number): Promise<void>;
}

/** Statements inside one transaction. */
export interface InTransaction {
  query(sql: string, params: readonly unknown[]): Promise<ExecutorRows>;
}

/** The options, checked, that the dialects read. */
export interface ExecutorLedgerOptions {
  /** The ledger table's bare name. */
  readonly table: string;
  readonly schema: string | undefined;
  /** PostgreSQL: the tables, quoted and qualified. */
  readonly tables: PostgresLedgerTables;
  /** PostgreSQL: the statement that sets the receipt's commit level (durability). */
  readonly commitLevel: string;
  readonly receiptPartitionMs: number;
  readonly tombstonePartitionMs: number;
}
