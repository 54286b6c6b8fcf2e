/** The SQLite LedgerStore (better-sqlite3@12, WAL, group commit; durable or process-crash-safe). */
export {
  createSqliteStore,
  DEFAULT_SQLITE_STORE_OPTIONS,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store.js';
export type { SqliteDatabase, SqliteStatement, SqliteTx } from './sqlite-database.js';
export { openSqliteDatabase } from './open-sqlite-database.js';
export { TransactionEndedError, StoreClosedError } from '../store-errors.js';
export { TransactionNotBegunError } from './sqlite-transaction.js';
export { sqliteSql } from './sqlite-sql.js';
export type { SqlHandle, SqlRunResult, SqlDialect } from '../../ledger/sql-handle.js';
export {
  createSqliteJournalStore,
  type SqliteJournalStoreOptions,
  type SqliteJournalTx,
} from './sqlite-journal-store.js';
export { migrateSqliteLedger, type SqliteMigrateOptions } from './sqlite-migrate.js';
export { compactSqliteFile, type CompactProgress } from './sqlite-compact.js';
export {
  LedgerMigrationError,
  type LedgerMigration,
  type MigrationProgress,
} from '../ledger-migration.js';
