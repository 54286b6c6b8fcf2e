import type { SweepResult } from '../../ledger/ledger-store.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';

/**
 * Bounded retention steps on SQLite (LedgerStore.sweep): each step is one BEGIN IMMEDIATE ...
 * COMMIT over at most `limit` receipts and `limit` tombstones, oldest first. better-sqlite3 is
 * synchronous, so a step freezes the process and holds the file's write lock for its length:
 * a few thousand rows take milliseconds, where one transaction over a million took 5 s.
 */
export interface SqliteSweep {
  step(nowMs: number, tombstoneMs: number, limit: number): SweepResult;
  backlog(nowMs: number): number;
}

export function sqliteSweep(
  tables: {
    readonly ledgerTable: string;
    readonly tombstoneTable: string;
    readonly busyTimeoutMs: number;
  },
  conn: () => SqliteDatabase,
  statement: (sql: string) => SqliteStatement,
): SqliteSweep {
  const { ledgerTable, tombstoneTable, busyTimeoutMs } = tables;
  // Oldest first by (expires_at, scope, key): the expires_at index holds the primary key after
  // the instant, so both statements walk the same index entries in the same order and, inside one
  // write transaction, pick the same rows without sorting.
  const dueLive = (now: string, limit: string): string =>
    `SELECT scope, key FROM ${ledgerTable} WHERE expires_at <= ${now} ORDER BY expires_at, scope, key LIMIT ${limit}`;
  const sql = {
    // Only tombstones that still have time to live are written: a backlog older than
    // tombstoneMs goes straight to "never seen".
    bury: `INSERT OR REPLACE INTO ${tombstoneTable} (scope, key, fingerprint, first_seen_at, expired_at, completed_at, expires_at)
      SELECT scope, key, fingerprint, first_seen_at, expires_at, completed_at, expires_at + ?1 FROM ${ledgerTable}
      WHERE (scope, key) IN (${dueLive('?2', '?3')}) AND expires_at + ?1 > ?2`,
    unlive: `DELETE FROM ${ledgerTable} WHERE (scope, key) IN (${dueLive('?', '?')})`,
    purge: `DELETE FROM ${tombstoneTable} WHERE (scope, key) IN (SELECT scope, key FROM ${tombstoneTable} WHERE expires_at <= ? ORDER BY expires_at, scope, key LIMIT ?)`,
    backlog: `SELECT (SELECT count(*) FROM ${ledgerTable} WHERE expires_at <= ?1) + (SELECT count(*) FROM ${tombstoneTable} WHERE expires_at <= ?1) AS n`,
  };
  return {
    step(nowMs, tombstoneMs, limit) {
      const db = conn();
      const rows = Number.isFinite(limit) ? limit : -1; // LIMIT -1: no limit
      if (!beginWithoutWaiting(db, busyTimeoutMs)) return { tombstoned: 0, deleted: 0, busy: true };
      try {
        // Numbered placeholders bind by name in better-sqlite3: {1: …, 2: …}.
        statement(sql.bury).run({ 1: tombstoneMs, 2: nowMs, 3: rows });
        const tombstoned = statement(sql.unlive).run(nowMs, rows).changes;
        const deleted = statement(sql.purge).run(nowMs, rows).changes;
        db.exec('COMMIT');
        return { tombstoned, deleted };
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },
    backlog: (nowMs) => Number((statement(sql.backlog).get({ 1: nowMs }) as { n: number }).n),
  };
}

/**
 * BEGIN IMMEDIATE, but only if the write lock is free now. Waiting in SQLite's busy handler would
 * hold this process's connection (and every request queued behind it) while another process
 * writes; and that handler polls with growing sleeps, so a waiter can miss many short gaps
 * between another process's writes. The sweep tries again after its pause instead.
 */
export function beginWithoutWaiting(db: SqliteDatabase, busyTimeoutMs: number): boolean {
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw error;
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}
