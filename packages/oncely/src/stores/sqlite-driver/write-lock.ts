import type { Clock } from '../../time/clock.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * The file's write lock, taken by this process without SQLite's busy handler.
 *
 * SQLite's own handler (busy_timeout) waits inside the library: it sleeps 1, 2, 5, 10, 15, 20, 25,
 * 25, 25, 50, 50, 100 ms between tries (sqlite3.c, sqliteDefaultBusyCallback). better-sqlite3 is
 * synchronous, so every one of those sleeps freezes the whole process, and a waiter that sleeps
 * 25 ms at a time can miss every short gap another process leaves between its writes (a sweep's
 * steps). bench/ledger-scale measured single writes waiting 103 and 128 ms, exactly sums of that
 * ladder, while no step held the lock longer than 44 ms. So the store's writer runs with
 * busy_timeout = 0 and waits here: a try costs microseconds, and between tries the event loop
 * runs everything else.
 */

/** How long the writer waits between two tries for a lock another process holds. */
export const LOCK_POLL_MS = 1;

/** BEGIN IMMEDIATE if the write lock is free now: false when another connection holds it. */
export function tryBeginImmediate(db: SqliteDatabase): boolean {
  try {
    db.exec('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  }
}

/**
 * BEGIN IMMEDIATE, waiting for another process's write lock in short sleeps on `clock` (the event
 * loop runs in between) for at most `timeoutMs`; then it throws SQLite's own SQLITE_BUSY error.
 * Undefined when the lock was free at once: the common path allocates nothing.
 */
export function beginImmediate(
  db: () => SqliteDatabase,
  clock: Clock,
  timeoutMs: number,
): Promise<void> | undefined {
  return tryBeginImmediate(db()) ? undefined : waitForLock(db, clock, timeoutMs);
}

async function waitForLock(
  db: () => SqliteDatabase,
  clock: Clock,
  timeoutMs: number,
): Promise<void> {
  const giveUpAt = clock.now() + timeoutMs;
  for (;;) {
    if (clock.now() >= giveUpAt) {
      db().exec('BEGIN IMMEDIATE'); // busy_timeout = 0: SQLITE_BUSY at once, or the lock if just freed
      return;
    }
    await clock.sleep(LOCK_POLL_MS);
    if (tryBeginImmediate(db())) return;
  }
}

/**
 * BEGIN IMMEDIATE (another process's lock waited for in the event loop, at most `timeoutMs`),
 * `fn`, then COMMIT; if `fn` throws, ROLLBACK (unless SQLite already ended the transaction).
 */
export async function inWriteTransaction<T>(
  db: () => SqliteDatabase,
  clock: Clock,
  timeoutMs: number,
  fn: (conn: SqliteDatabase) => T | Promise<T>,
): Promise<T> {
  const waiting = beginImmediate(db, clock, timeoutMs);
  if (waiting !== undefined) await waiting;
  const conn = db();
  try {
    const result = await fn(conn);
    conn.exec('COMMIT');
    return result;
  } catch (error) {
    if (conn.inTransaction) conn.exec('ROLLBACK');
    throw error;
  }
}

/**
 * Runs `fn` inside the write transaction the caller began, then COMMIT; if `fn` throws, ROLLBACK
 * (unless SQLite already ended the transaction) and the error goes on.
 */
export function commitOrRollBack<T>(db: SqliteDatabase, fn: () => T): T {
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** SQLite's SQLITE_BUSY, as better-sqlite3 reports it. */
export function isBusy(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'SQLITE_BUSY';
}
