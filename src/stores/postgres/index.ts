/** The PostgreSQL LedgerStore (pg Pool; the effect shares the receipt's client and transaction). */
export {
  createPostgresStore,
  DEFAULT_POSTGRES_STORE_OPTIONS,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store.js';
export type {
  PgPool,
  PgPoolClient,
  PgQueryable,
  PgQueryConfig,
  PgQueryResult,
  PgTx,
} from './pg-pool.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export {
  openPostgresPool,
  redact,
  DEFAULT_OPEN_POSTGRES_POOL_OPTIONS,
  type OpenPostgresPoolOptions,
} from './open-postgres-pool.js';
export { postgresSql } from './postgres-sql.js';
export type { SqlHandle, SqlRunResult, SqlDialect } from '../../ledger/sql-handle.js';
export {
  createPostgresJournalStore,
  type PostgresJournalStoreOptions,
} from './postgres-journal-store.js';
export { migratePostgresLedger, type PostgresMigrateOptions } from './postgres-migrate.js';
export {
  LedgerMigrationError,
  type LedgerMigration,
  type MigrationProgress,
} from '../ledger-migration.js';
