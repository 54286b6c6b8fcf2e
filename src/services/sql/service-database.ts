import type { LedgerStore } from '../../ledger/ledger-store.js';
import type { SqliteTx } from '../../stores/sqlite/sqlite-database.js';
import type { PgTx } from '../../stores/postgres/pg-pool.js';
import { postgresRunner, sqliteRunner, type SqlDialect, type SqlRunner } from './sql-runner.js';

/**
 * A service's view of the ledger's database: its own tables live beside the ledger's, so its
 * writes join the ledger's transaction (effect and receipt commit together).
 */
export interface ServiceDatabase<Tx> {
  readonly dialect: SqlDialect;
  /** The runner for an effect, over the ledger's transaction handle. */
  within(tx: Tx): SqlRunner;
  /**
   * Runs `fn` in a transaction of its own: for reads outside a request's effect and for setup.
   * It goes through the store, so on one SQLite connection it never lands inside another
   * request's open transaction.
   */
  transaction<T>(fn: (sql: SqlRunner) => Promise<T>): Promise<T>;
}

export function sqliteServiceDatabase(store: LedgerStore<SqliteTx>): ServiceDatabase<SqliteTx> {
  return {
    dialect: 'sqlite',
    within: sqliteRunner,
    transaction: (fn) => store.transaction((tx) => fn(sqliteRunner(tx))),
  };
}

export function postgresServiceDatabase(store: LedgerStore<PgTx>): ServiceDatabase<PgTx> {
  return {
    dialect: 'postgres',
    within: postgresRunner,
    transaction: (fn) => store.transaction((tx) => fn(postgresRunner(tx))),
  };
}

/** Column types that differ between the two dialects. */
export function columnTypes(dialect: SqlDialect): { readonly instant: string; readonly bytes: string } {
  return dialect === 'postgres' ? { instant: 'BIGINT', bytes: 'BYTEA' } : { instant: 'INTEGER', bytes: 'BLOB' };
}
