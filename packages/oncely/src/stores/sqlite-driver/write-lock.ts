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

/**
 * How a write transaction commits: `'fsync'` at the connection's own `synchronous` level, or
 * `'no-fsync'`: at `synchronous = NORMAL` for this transaction only, which in WAL mode writes the
 * commit to the log without an fsync, so it survives a crash of the process but may be lost on
 * power loss (https://www.sqlite.org/pragma.html#pragma_synchronous). The level is lowered right
 * before BEGIN and restored right after COMMIT or ROLLBACK, in the same synchronous stretch of
 * JavaScript, so no other commit on the connection is ever made at the lowered level.
 */
export type CommitSync = 'fsync' | 'no-fsync';

/** SQLite's `synchronous` levels: NORMAL is 1; FULL (2) and EXTRA (3) fsync each commit. */
const NORMAL = 1;

/** The `synchronous` level a store set on its connection and owns (setSyncLevel). */
const ownedLevels = new WeakMap<SqliteDatabase, number>();

/**
 * Sets the connection's `synchronous` level (1 NORMAL, 2 FULL, 3 EXTRA) as the one its store
 * keeps: a 'no-fsync' transaction restores this level after it, without reading the level back
 * first (better-sqlite3's `pragma()` prepares a statement at every call, about 0.05 ms of a cold
 * process in front of every claim). A level the app sets later on the connection is not kept.
 */
export function setSyncLevel(db: SqliteDatabase, level: 1 | 2 | 3): void {
  db.exec(`PRAGMA synchronous = ${level}`);
  ownedLevels.set(db, level);
}

/** Lowers the connection to NORMAL for one transaction: the function that restores it, if lowered. */
function lowerSync(db: SqliteDatabase, sync: CommitSync): (() => void) | undefined {
  // Inside the caller's own transaction SQLite refuses the change: BEGIN then fails as before.
  if (sync === 'fsync' || db.inTransaction) return undefined;
  const level = ownedLevels.get(db) ?? Number(db.pragma('synchronous', { simple: true }));
  if (!(level > NORMAL)) return undefined;
  db.exec('PRAGMA synchronous = NORMAL');
  return () => {
    if (!db.inTransaction) db.exec(`PRAGMA synchronous = ${level}`);
  };
}

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
 * tryBeginImmediate at the commit level asked for: the function that restores the connection's
 * level once the transaction ends, or false when another connection holds the lock (the level
 * restored already).
 */
function tryBeginAt(db: SqliteDatabase, sync: CommitSync): (() => void) | false {
  const restore = lowerSync(db, sync);
  try {
    if (tryBeginImmediate(db)) return restore ?? noRestore;
  } catch (error) {
    restore?.();
    throw error;
  }
  restore?.();
  return false;
}

const noRestore = (): void => undefined;

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
  return tryBeginImmediate(db())
    ? undefined
    : waitForLock(db, clock, timeoutMs, 'fsync').then(noRestore);
}

/** Waits for the lock as beginImmediate does; resolves with the function that restores the level. */
async function waitForLock(
  db: () => SqliteDatabase,
  clock: Clock,
  timeoutMs: number,
  sync: CommitSync,
): Promise<() => void> {
  const giveUpAt = clock.now() + timeoutMs;
  for (;;) {
    if (clock.now() >= giveUpAt) {
      // busy_timeout = 0: SQLITE_BUSY at once, or the lock if just freed
      const restore = lowerSync(db(), sync) ?? noRestore;
      try {
        db().exec('BEGIN IMMEDIATE');
      } catch (error) {
        restore();
        throw error;
      }
      return restore;
    }
    await clock.sleep(LOCK_POLL_MS);
    const began = tryBeginAt(db(), sync);
    if (began !== false) return began;
  }
}

/**
 * BEGIN IMMEDIATE (another process's lock waited for in the event loop, at most `timeoutMs`),
 * `fn`, then COMMIT; if `fn` throws, ROLLBACK (unless SQLite already ended the transaction).
 * `sync`: whether the COMMIT fsyncs (CommitSync).
 */
export async function inWriteTransaction<T>(
  db: () => SqliteDatabase,
  clock: Clock,
  timeoutMs: number,
  fn: (conn: SqliteDatabase) => T | Promise<T>,
  sync: CommitSync = 'fsync',
): Promise<T> {
  const began = tryBeginAt(db(), sync);
  const restore = began !== false ? began : await waitForLock(db, clock, timeoutMs, sync);
  const conn = db();
  try {
    const result = await fn(conn);
    conn.exec('COMMIT');
    return result;
  } catch (error) {
    if (conn.inTransaction) conn.exec('ROLLBACK');
    throw error;
  } finally {
    restore();
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
