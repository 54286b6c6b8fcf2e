import { StoreClosedError } from '../../store-errors.js';
import type { PgPool, PgQueryable, PgQueryConfig, PgTx } from '../../postgres-driver/pg-pool.js';
import { setUpPostgresLedger } from './postgres-ledger-schema.js';
import {
  RAISE_TO_SYNCHRONOUS,
  type ResolvedPostgresStoreOptions,
} from './postgres-store-options.js';
import { PostgresTransaction } from './postgres-transaction.js';

/** Rows and a count, as the store's statements read them. */
export interface PgRows {
  readonly rows: unknown[];
  readonly rowCount: number;
}

/** The store's way to its pool: made lazily, the table set up once, ended if the store made it. */
export interface PostgresConnection {
  /** The pool; throws StoreClosedError once closed. */
  pool(): PgPool;
  /** Creates the schema and table once; a failure is retried by the next call. */
  setUp(): Promise<void>;
  /** A statement on the pool, after the set-up. */
  query(statement: string | PgQueryConfig, values?: unknown[]): Promise<PgRows>;
  /** `fn` in a transaction of the store's own (the partitions' DDL), committed synchronously. */
  transact<T>(
    fn: (query: (text: string, values?: unknown[]) => Promise<PgRows>) => Promise<T>,
  ): Promise<T>;
  close(): Promise<void>;
}

export function postgresConnection(o: ResolvedPostgresStoreOptions): PostgresConnection {
  const { tables } = o;
  let pool: PgPool | undefined;
  let ready: Promise<void> | undefined;
  let closed = false;

  function thePool(): PgPool {
    if (closed) throw new StoreClosedError('postgres');
    return (pool ??= typeof o.pool === 'function' ? o.pool() : o.pool);
  }

  /** BEGIN, `fn`, COMMIT (synchronously: DDL is rare); ROLLBACK when anything throws. */
  const inTransaction = <T>(fn: (tx: PgTx) => Promise<T>): Promise<T> =>
    PostgresTransaction.run(thePool(), RAISE_TO_SYNCHRONOUS, fn);

  function setUp(): Promise<void> {
    ready ??= inTransaction((tx) =>
      setUpPostgresLedger(tx as unknown as PgQueryable, tables, o.schema),
    ).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  return {
    pool: thePool,
    setUp,
    async query(statement, values) {
      await setUp();
      const p = thePool();
      const result =
        typeof statement === 'string' ? await p.query(statement, values) : await p.query(statement);
      return { rows: result.rows, rowCount: result.rowCount ?? 0 };
    },
    async transact(fn) {
      await setUp();
      return inTransaction((tx) => fn((text, values = []) => tx.query(text, values)));
    },
    async close() {
      if (closed) return;
      closed = true;
      if (typeof o.pool === 'function' && pool) await pool.end();
      pool = undefined;
    },
  };
}
