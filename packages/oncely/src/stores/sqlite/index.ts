/** The SQLite LedgerStore (better-sqlite3@12, WAL, group commit; durable or process-crash-safe). */
export {
  createSqliteStore,
  type SqliteStore,
  type SqliteStoreOptions,
} from '../ledger/sqlite/sqlite-store.js';
export type { SqliteDatabase, SqliteTx } from '../sqlite-driver/sqlite-database.js';
export { openSqliteDatabase } from '../sqlite-driver/open-sqlite-database.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export { TransactionNotBegunError } from '../ledger/sqlite/sqlite-transaction.js';
export { sqliteSql } from '../sqlite-driver/sqlite-sql.js';
export { createSqliteJournalStore } from '../journal/sqlite/sqlite-journal-store.js';
export { migrateSqliteLedger } from '../ledger/sqlite/sqlite-migrate.js';
export { compactSqliteFile, type CompactProgress } from '../sqlite-driver/sqlite-compact.js';
export { LedgerMigrationError, type LedgerMigration } from '../ledger/ledger-migration.js';
export {
  createSqliteRetryBudget,
  type SqliteRetryBudgetOptions,
} from '../retry-budget/sqlite-retry-budget.js';
export type {
  SharedRetryBudget,
  SharedRetryBudgetOptions,
} from '../retry-budget/shared-retry-budget.js';
export { createSqlStepStore, type SqlStepStoreOptions } from '../ledger/steps/sql-step-store.js';
