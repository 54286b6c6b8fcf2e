/** The SQLite LedgerStore (better-sqlite3@12, WAL, group commit; durable or process-crash-safe). */
export { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export type { SqliteDatabase, SqliteTx } from './sqlite-database.js';
export { openSqliteDatabase } from './open-sqlite-database.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export { TransactionNotBegunError } from './sqlite-transaction.js';
export { sqliteSql } from './sqlite-sql.js';
export { createSqliteJournalStore } from './sqlite-journal-store.js';
export { migrateSqliteLedger } from './sqlite-migrate.js';
export { compactSqliteFile, type CompactProgress } from './sqlite-compact.js';
export { LedgerMigrationError, type LedgerMigration } from '../ledger-migration.js';
export {
  createSqliteRetryBudget,
  type SqliteRetryBudgetOptions,
} from './sqlite-retry-budget.js';
export type { SharedRetryBudget, SharedRetryBudgetOptions } from '../shared-retry-budget.js';
export { createSqlStepStore, type SqlStepStoreOptions } from '../steps/sql-step-store.js';
