import { InvalidOptionError, type LedgerStore, type SqlDialect, type SqlHandle } from 'oncely';

/**
 * A service's view of the ledger's database: its own tables live beside the ledger's, so its
 * writes join the ledger's transaction (effect and receipt commit together).
 */
export interface ServiceDatabase<Tx> {
  readonly dialect: SqlDialect;
  /** The SQL handle for an effect, over the ledger's transaction handle. */
  within(tx: Tx): SqlHandle;
  /**
   * Runs `fn` in a transaction of its own: for reads outside a request's effect and for setup.
   * It goes through the store, so on one SQLite connection it never lands inside another
   * request's open transaction.
   */
  transaction<T>(fn: (sql: SqlHandle) => Promise<T>): Promise<T>;
}

/** The service database over a SQL store (SQLite or PostgreSQL): one code path for both dialects. */
export function serviceDatabase<Tx>(
  store: LedgerStore<Tx>,
  dialect: SqlDialect,
): ServiceDatabase<Tx> {
  const within = store.sql?.bind(store);
  if (within === undefined)
    throw new InvalidOptionError(
      'store',
      store.name,
      'a SQL store (createSqliteStore or createPostgresStore)',
    );
  return { dialect, within, transaction: (fn) => store.transaction((tx) => fn(within(tx))) };
}

export const sqliteServiceDatabase = <Tx>(store: LedgerStore<Tx>): ServiceDatabase<Tx> =>
  serviceDatabase(store, 'sqlite');
export const postgresServiceDatabase = <Tx>(store: LedgerStore<Tx>): ServiceDatabase<Tx> =>
  serviceDatabase(store, 'postgres');

/** Column types that differ between the two dialects. */
export function columnTypes(dialect: SqlDialect): {
  readonly instant: string;
  readonly bytes: string;
} {
  return dialect === 'postgres'
    ? { instant: 'BIGINT', bytes: 'BYTEA' }
    : { instant: 'INTEGER', bytes: 'BLOB' };
}
