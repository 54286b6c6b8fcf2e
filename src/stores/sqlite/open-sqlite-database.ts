import Database from 'better-sqlite3';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * Opens a better-sqlite3@12 connection (major 13 crashes on Node 20). For the lazy factory form:
 * `createSqliteStore({ database: () => openSqliteDatabase('oncely-data/ledger.db') })`.
 */
export function openSqliteDatabase(filename: string): SqliteDatabase {
  return new Database(filename);
}
