import { InvalidOptionError } from '../../contract/errors.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** A better-sqlite3 connection or a factory of one (the SQLite ledger, journal and retry budget). */
export function checkSqliteDatabase<D extends SqliteDatabase | (() => SqliteDatabase)>(
  database: D,
): D {
  if (typeof database !== 'function' && typeof database?.prepare !== 'function') {
    throw new InvalidOptionError(
      'database',
      database,
      'a better-sqlite3 Database or a function returning one',
    );
  }
  return database;
}

/** How long a write waits for another process's lock: whole ms >= 0 (`fallback` when not given). */
export function checkBusyTimeoutMs(value: number | undefined, fallback: number): number {
  const busyTimeoutMs = value ?? fallback;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0)
    throw new InvalidOptionError(
      'busyTimeoutMs',
      busyTimeoutMs,
      'a whole number of milliseconds >= 0',
    );
  return busyTimeoutMs;
}
