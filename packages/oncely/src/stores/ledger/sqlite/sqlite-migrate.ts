import { LEDGER_COLUMNS, checkIdentifier, entryValues, type LedgerRow } from '../ledger-row.js';
import {
  LedgerMigrationError,
  MIGRATION_BATCH_ROWS,
  entryOfEarlierRow,
  missingLedgerColumns,
  type LedgerMigration,
  type MigrationProgress,
} from '../ledger-migration.js';
import { TOMBSTONE_COLUMNS, tombstoneValues } from '../tombstone-row.js';
import { DEFAULT_SQLITE_STORE_OPTIONS } from './sqlite-store-options.js';
import type { SqliteDatabase } from '../../sqlite-driver/sqlite-database.js';
import { isEarlierSqliteLayout, sqliteLedgerSchema } from './sqlite-ledger-schema.js';
import { tombstoneTableOf } from './sqlite-tombstones.js';

export interface SqliteMigrateOptions {
  /** The ledger's table. @default 'oncely_ledger' */
  readonly table?: string;
  readonly onProgress?: MigrationProgress;
}

/**
 * Carries a ledger table made by an earlier oncely (fingerprints as hex text, headers as JSON,
 * tombstones kept in place as 'expired' rows) over to the current layout (sqlite-ledger-schema.ts):
 * every receipt and claim into the new table, every tombstone into the tombstone table, each row
 * read and written with the store's own codec. All in one write transaction: the earlier table is
 * renamed aside, the new tables made, the rows copied and counted, and the earlier table dropped
 * only when every row arrived; any error (a row that is not what oncely wrote) rolls all of it
 * back, leaving the file as it was. Stop the servers on the file first: the transaction keeps
 * other writers out until it ends. The freed pages stay in the file; `oncely ledger compact
 * --full` hands them back.
 */
export function migrateSqliteLedger(
  db: SqliteDatabase,
  options: SqliteMigrateOptions = {},
): LedgerMigration {
  const table = checkIdentifier('table', options.table ?? DEFAULT_SQLITE_STORE_OPTIONS.table);
  const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{
    name: string;
    type: string;
  }>;
  const nothing = (found: 'missing' | 'current'): LedgerMigration => ({
    table,
    found,
    receipts: 0,
    tombstones: 0,
  });
  if (columns.length === 0) return nothing('missing');
  if (!isEarlierSqliteLayout(columns)) return nothing('current');
  const missing = missingLedgerColumns(columns.map((c) => c.name));
  if (missing.length > 0)
    throw new LedgerMigrationError(table, `it has no column ${missing.join(', ')}`);
  const aside = `${table}_migrating`;
  const tombstoneTable = tombstoneTableOf(table);
  const exists = (name: string): boolean =>
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !==
    undefined;
  for (const name of [aside, tombstoneTable])
    if (exists(name)) throw new LedgerMigrationError(table, `a table ${name} is in the way`);

  db.exec('BEGIN IMMEDIATE');
  try {
    // The earlier table's index keeps its name when the table is renamed: it goes first, so the
    // current layout's index of that name is made fresh on the new table.
    db.exec(`DROP INDEX IF EXISTS ${table}_expires_at; ALTER TABLE ${table} RENAME TO ${aside};`);
    db.exec(sqliteLedgerSchema(table));
    const total = Number(
      (db.prepare(`SELECT count(*) AS n FROM ${aside}`).get() as { n: number }).n,
    );
    const page = db.prepare(
      `SELECT ${LEDGER_COLUMNS.join(', ')} FROM ${aside} WHERE (scope, key) > (?, ?) ORDER BY scope, key LIMIT ${MIGRATION_BATCH_ROWS}`,
    );
    const putLive = db.prepare(
      `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')})`,
    );
    const putTombstone = db.prepare(
      `INSERT INTO ${tombstoneTable} (${TOMBSTONE_COLUMNS.join(', ')}) VALUES (${TOMBSTONE_COLUMNS.map(() => '?').join(', ')})`,
    );
    let receipts = 0;
    let tombstones = 0;
    // Keyset pages in primary-key order (a statement being iterated would keep the connection busy).
    for (let after: [unknown, unknown] = ['', ''], first = true; ; first = false) {
      const rows = (
        first
          ? db
              .prepare(
                `SELECT ${LEDGER_COLUMNS.join(', ')} FROM ${aside} ORDER BY scope, key LIMIT ${MIGRATION_BATCH_ROWS}`,
              )
              .all()
          : page.all(...after)
      ) as LedgerRow[];
      if (rows.length === 0) break;
      for (const row of rows) {
        const moved = entryOfEarlierRow(table, row);
        if ('live' in moved) {
          putLive.run(...entryValues(moved.live));
          receipts++;
        } else {
          putTombstone.run(...tombstoneValues(moved.tombstone));
          tombstones++;
        }
      }
      const last = rows.at(-1)!;
      after = [last.scope, last.key];
      options.onProgress?.(receipts + tombstones, total);
    }
    if (receipts + tombstones !== total)
      throw new LedgerMigrationError(
        table,
        `${receipts + tombstones} of its ${total} rows were read (a key that is not text?)`,
      );
    db.exec(`DROP TABLE ${aside}`);
    db.exec('COMMIT');
    return { table, found: 'earlier', receipts, tombstones };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
