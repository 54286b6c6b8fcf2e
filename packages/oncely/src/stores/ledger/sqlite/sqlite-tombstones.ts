import type { EntryVersion, ExpiredEntry, LedgerEntry } from '../../../ledger/ledger-entry.js';
import { LEDGER_COLUMNS, entryValues } from '../ledger-row.js';
import {
  TOMBSTONE_COLUMNS,
  expiredAtOfToken,
  rowToTombstone,
  tombstoneValues,
  type TombstoneRow,
} from '../tombstone-row.js';
import type { SqliteDatabase, SqliteStatement } from '../../sqlite-driver/sqlite-database.js';

/** The SQLite ledger's tombstone table (see tombstone-row.ts): DDL and the writes that cross tables. */
export interface SqliteTombstones {
  readonly table: string;
  /** The newest tombstone of (scope, key), or undefined. */
  get(scope: string, key: string): ExpiredEntry | undefined;
  /** Purge on access: deletes the live row matching `expected` and writes its tombstone, atomically. */
  bury(expected: EntryVersion, tombstone: ExpiredEntry): boolean;
  /**
   * A key claimed again after its tombstone: the fresh row goes into the live table, where it
   * wins over the tombstone (which stays until its own end: a later lookup after a release still
   * says the key once expired). False when a live row exists already.
   */
  revive(next: LedgerEntry): boolean;
  /** Deletes the tombstone matching `expected`. */
  remove(expected: EntryVersion): boolean;
}

/**
 * WITHOUT ROWID: the primary key is the table, so (scope, key) is stored once, not in a rowid
 * table and again in its key index (https://www.sqlite.org/withoutrowid.html).
 */
export function sqliteTombstoneSchema(ledgerTable: string): string {
  const t = tombstoneTableOf(ledgerTable);
  return `CREATE TABLE IF NOT EXISTS ${t} (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint BLOB NOT NULL,
      first_seen_at INTEGER NOT NULL,
      expired_at INTEGER NOT NULL,
      completed_at INTEGER,
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS ${t}_expires_at ON ${t} (expires_at);`;
}

export function tombstoneTableOf(ledgerTable: string): string {
  return `${ledgerTable}_tombstones`;
}

/** The statements that cross the live and tombstone tables (shared with the ORM stores). */
export function sqliteTombstoneStatements(ledgerTable: string) {
  const table = tombstoneTableOf(ledgerTable);
  const where = 'scope = ? AND key = ? AND token = ? AND state = ?';
  return {
    get: `SELECT * FROM ${table} WHERE scope = ? AND key = ?`,
    put: `INSERT OR REPLACE INTO ${table} (${TOMBSTONE_COLUMNS.join(', ')}) VALUES (${TOMBSTONE_COLUMNS.map(() => '?').join(', ')})`,
    unlive: `DELETE FROM ${ledgerTable} WHERE ${where}`,
    revive: `INSERT INTO ${ledgerTable} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    remove: `DELETE FROM ${table} WHERE scope = ? AND key = ? AND expired_at = ?`,
  };
}

export function sqliteTombstones(
  ledgerTable: string,
  conn: () => SqliteDatabase,
  statement: (sql: string) => SqliteStatement,
): SqliteTombstones {
  const table = tombstoneTableOf(ledgerTable);
  const sql = sqliteTombstoneStatements(ledgerTable);
  return {
    table,
    get(scope, key) {
      const row = statement(sql.get).get(scope, key) as TombstoneRow | undefined;
      return row === undefined ? undefined : rowToTombstone(row);
    },
    bury(expected, tombstone) {
      // A section of the writer's open batch (group-commit.ts): the savepoint keeps the move
      // all-or-nothing without undoing the batch's other sections.
      const db = conn();
      db.exec('SAVEPOINT oncely_bury');
      try {
        const moved =
          statement(sql.unlive).run(expected.scope, expected.key, expected.token, expected.state)
            .changes === 1;
        if (moved) statement(sql.put).run(...tombstoneValues(tombstone));
        db.exec('RELEASE oncely_bury');
        return moved;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK TO oncely_bury; RELEASE oncely_bury');
        throw error;
      }
    },
    revive: (next) => statement(sql.revive).run(...entryValues(next)).changes === 1,
    remove(expected) {
      const expiredAt = expiredAtOfToken(expected);
      if (expiredAt === undefined) return false;
      return statement(sql.remove).run(expected.scope, expected.key, expiredAt).changes === 1;
    },
  };
}
