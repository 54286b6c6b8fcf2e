/** The PostgreSQL LedgerStore (pg Pool; the effect shares the receipt's client and transaction). */
export { createPostgresStore, DEFAULT_POSTGRES_STORE_OPTIONS, type PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
export type { PgPool, PgPoolClient, PgQueryable, PgQueryResult, PgTx } from './pg-pool.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
