import Database from 'better-sqlite3';
import { OncelyError } from '../../contract/errors.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * Opens a better-sqlite3@12 connection (major 13 crashes on Node 20). For the lazy factory form:
 * `createSqliteStore({ database: () => openSqliteDatabase('oncely-data/ledger.db') })`. A file
 * that cannot be opened is a `store_unavailable` error naming the file (the driver's own message
 * does not).
 */
export function openSqliteDatabase(filename: string): SqliteDatabase {
  try {
    return new Database(filename);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new OncelyError(
      'store_unavailable',
      `cannot open the SQLite database ${JSON.stringify(filename)}: ${why}`,
      { cause },
    );
  }
}
