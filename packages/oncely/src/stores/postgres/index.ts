/** The PostgreSQL LedgerStore (pg Pool; the effect shares the receipt's client and transaction). */
export {
  createPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from '../ledger/postgres/postgres-store.js';
export type { PgPool, PgTx } from '../postgres-driver/pg-pool.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export {
  openPostgresPool,
  redact,
  type OpenPostgresPoolOptions,
} from '../postgres-driver/open-postgres-pool.js';
export { postgresSql } from '../postgres-driver/postgres-sql.js';
export { createPostgresJournalStore } from '../journal/postgres/postgres-journal-store.js';
export { migratePostgresLedger } from '../ledger/postgres/postgres-migrate.js';
export { LedgerMigrationError, type LedgerMigration } from '../ledger/ledger-migration.js';
export {
  createPostgresRetryBudget,
  type PostgresRetryBudgetOptions,
} from '../retry-budget/postgres-retry-budget.js';
export type {
  SharedRetryBudget,
  SharedRetryBudgetOptions,
} from '../retry-budget/shared-retry-budget.js';
export { createSqlStepStore, type SqlStepStoreOptions } from '../ledger/steps/sql-step-store.js';
