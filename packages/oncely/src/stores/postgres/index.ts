/** The PostgreSQL LedgerStore (pg Pool; the effect shares the receipt's client and transaction). */
export {
  createPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store.js';
export type { PgPool, PgTx } from './pg-pool.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export {
  openPostgresPool,
  redact,
  type OpenPostgresPoolOptions,
} from './open-postgres-pool.js';
export { postgresSql } from './postgres-sql.js';
export { createPostgresJournalStore } from './postgres-journal-store.js';
export { migratePostgresLedger } from './postgres-migrate.js';
export { LedgerMigrationError, type LedgerMigration } from '../ledger-migration.js';
export {
  createPostgresRetryBudget,
  type PostgresRetryBudgetOptions,
} from './postgres-retry-budget.js';
export type { SharedRetryBudget, SharedRetryBudgetOptions } from '../shared-retry-budget.js';
export { createSqlStepStore, type SqlStepStoreOptions } from '../steps/sql-step-store.js';
