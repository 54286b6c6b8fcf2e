import type { SweepResult } from '../../../ledger/ledger-store.js';
import type { SqliteDatabase, SqliteStatement } from '../../sqlite-driver/sqlite-database.js';
import { commitOrRollBack, tryBeginImmediate } from '../../sqlite-driver/write-lock.js';

/** Where a count of due rows stopped: the last (expires_at, scope, key) counted in a table. */
export type BacklogCursor = readonly [table: 0 | 1, expiresAt: number, scope: string, key: string];

/**
 * Bounded retention steps on SQLite (LedgerStore.sweep): each step is one BEGIN IMMEDIATE ...
 * COMMIT over at most `limit` receipts and `limit` tombstones, oldest first. better-sqlite3 is
 * synchronous, so a step freezes the process and holds the file's write lock for its length:
 * a few hundred rows take milliseconds, where one transaction over a million took 5 s.
 */
export interface SqliteSweep {
  step(nowMs: number, tombstoneMs: number, limit: number): SweepResult;
  /**
   * Counts due rows after `cursor` (from the start when undefined), at most `chunk` of them: the
   * count, and where to go on (undefined once everything due is counted). A count of a million
   * rows takes some 50 ms; in chunks, requests run in between. `read` prepares on the connection
   * to count on (the read connection, when there is one).
   */
  countDue(
    nowMs: number,
    cursor: BacklogCursor | undefined,
    chunk: number,
    read: (sql: string) => SqliteStatement,
  ): { count: number; next: BacklogCursor | undefined };
}

export function sqliteSweep(
  tables: {
    readonly ledgerTable: string;
    readonly tombstoneTable: string;
    /** The store's own synchronous level, restored after each step. */
    readonly synchronous: 'FULL' | 'NORMAL';
  },
  conn: () => SqliteDatabase,
  statement: (sql: string) => SqliteStatement,
): SqliteSweep {
  const { ledgerTable, tombstoneTable, synchronous } = tables;
  // Oldest first by (expires_at, scope, key): the expires_at index holds the primary key after
  // the instant, so both statements walk the same index entries in the same order and, inside one
  // write transaction, pick the same rows without sorting.
  const dueLive = (now: string, limit: string): string =>
    `SELECT scope, key FROM ${ledgerTable} WHERE expires_at <= ${now} ORDER BY expires_at, scope, key LIMIT ${limit}`;
  // A chunk of the count: the row `chunk` rows on from the cursor (a walk of the covering
  // expires_at index), or, past the last one, how many are left.
  const after = '(expires_at, scope, key) > (?2, ?3, ?4)';
  const countSql = (table: string) => ({
    last: `SELECT expires_at, scope, key FROM ${table} WHERE expires_at <= ?1 AND ${after} ORDER BY expires_at, scope, key LIMIT 1 OFFSET ?5`,
    rest: `SELECT count(*) AS n FROM ${table} WHERE expires_at <= ?1 AND ${after}`,
  });
  const sql = {
    // Only tombstones that still have time to live are written: a backlog older than
    // tombstoneMs goes straight to "never seen".
    bury: `INSERT OR REPLACE INTO ${tombstoneTable} (scope, key, fingerprint, first_seen_at, expired_at, completed_at, expires_at)
      SELECT scope, key, fingerprint, first_seen_at, expires_at, completed_at, expires_at + ?1 FROM ${ledgerTable}
      WHERE (scope, key) IN (${dueLive('?2', '?3')}) AND expires_at + ?1 > ?2`,
    unlive: `DELETE FROM ${ledgerTable} WHERE (scope, key) IN (${dueLive('?', '?')})`,
    purge: `DELETE FROM ${tombstoneTable} WHERE (scope, key) IN (SELECT scope, key FROM ${tombstoneTable} WHERE expires_at <= ? ORDER BY expires_at, scope, key LIMIT ?)`,
    count: [countSql(ledgerTable), countSql(tombstoneTable)] as const,
  };
  return {
    step(nowMs, tombstoneMs, limit) {
      const db = conn();
      const rows = Number.isFinite(limit) ? limit : -1; // LIMIT -1: no limit
      // A step commits without an fsync (synchronous = NORMAL in WAL): it holds the write lock
      // for less, and a step lost to a power cut is simply done again by the next sweep
      // (retention is judged by time). The next durable commit on the file makes it durable too:
      // what survives is a prefix of the commit order (docs/durability.md).
      if (synchronous !== 'NORMAL') db.pragma('synchronous = NORMAL');
      try {
        if (!tryBeginImmediate(db)) return { tombstoned: 0, deleted: 0, busy: true };
        return commitOrRollBack(db, () => {
          // Numbered placeholders bind by name in better-sqlite3: {1: …, 2: …}.
          statement(sql.bury).run({ 1: tombstoneMs, 2: nowMs, 3: rows });
          const tombstoned = statement(sql.unlive).run(nowMs, rows).changes;
          const deleted = statement(sql.purge).run(nowMs, rows).changes;
          return { tombstoned, deleted };
        });
      } finally {
        if (synchronous !== 'NORMAL') db.pragma(`synchronous = ${synchronous}`);
      }
    },
    countDue(nowMs, cursor, chunk, read) {
      const [table, expiresAt, scope, key] = cursor ?? [0, -Infinity, '', ''];
      const params = { 1: nowMs, 2: expiresAt, 3: scope, 4: key, 5: chunk - 1 };
      const q = sql.count[table];
      const last = read(q.last).get(params) as
        | { expires_at: number; scope: string; key: string }
        | undefined;
      if (last) return { count: chunk, next: [table, last.expires_at, last.scope, last.key] };
      const { n } = read(q.rest).get({ 1: nowMs, 2: expiresAt, 3: scope, 4: key }) as {
        n: number;
      };
      return { count: n, next: table === 0 ? [1, -Infinity, '', ''] : undefined };
    },
  };
}
