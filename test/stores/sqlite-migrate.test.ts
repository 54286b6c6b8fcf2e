// A SQLite ledger table made by an earlier oncely is carried over to the current layout: every
// receipt, claim and tombstone answers as before; a bad row refuses the whole migration and
// leaves the file as it was; a current table is left alone.
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isOncelyError } from '#oncely/contract/errors.js';
import { LEDGER_COLUMNS } from '#oncely/stores/ledger/ledger-row.js';
import {
  createSqliteStore,
  migrateSqliteLedger,
  openSqliteDatabase,
  type SqliteDatabase,
} from '#oncely/stores/sqlite/index.js';
import {
  BAD_ROW,
  EARLIER_ROWS,
  assertMigratedAnswers,
  earlierSchema,
} from './earlier-ledger-rows.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-sqlite-migrate-');
let n = 0;

function earlierFile(rows: unknown[][]): string {
  const path = join(dir, `m-${++n}.db`);
  const db = openSqliteDatabase(path);
  db.exec(`${earlierSchema('oncely_ledger', 'INTEGER', 'BLOB')};
    CREATE INDEX oncely_ledger_expires_at ON oncely_ledger (expires_at);`);
  const insert = db.prepare(
    `INSERT INTO oncely_ledger (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')})`,
  );
  for (const row of rows) insert.run(...row);
  db.close();
  return path;
}

const tables = (db: SqliteDatabase): string[] =>
  (
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as Array<{
      name: string;
    }>
  ).map((r) => r.name);

describe('SQLite ledger migration', () => {
  it('carries receipts, claims and tombstones of the earlier layout over, answering as before', async () => {
    const path = earlierFile(EARLIER_ROWS);
    const refused = createSqliteStore({ database: () => openSqliteDatabase(path) });
    await assert.rejects(
      refused.read(() => undefined),
      (e) =>
        isOncelyError(e) && e.code === 'ledger_layout' && /oncely ledger migrate/.test(e.message),
    );
    await refused.close();

    const db = openSqliteDatabase(path);
    const progress: Array<[number, number]> = [];
    const report = migrateSqliteLedger(db, {
      onProgress: (done, total) => progress.push([done, total]),
    });
    assert.deepEqual(report, {
      table: 'oncely_ledger',
      found: 'earlier',
      receipts: 3,
      tombstones: 1,
    });
    assert.deepEqual(progress, [[4, 4]]);
    assert.deepEqual(
      tables(db),
      ['oncely_ledger', 'oncely_ledger_tombstones'],
      'the earlier table is gone',
    );
    assert.deepEqual(
      migrateSqliteLedger(db),
      { table: 'oncely_ledger', found: 'current', receipts: 0, tombstones: 0 },
      'a second run finds nothing to do',
    );
    db.close();

    const store = createSqliteStore({ database: () => openSqliteDatabase(path) });
    await assertMigratedAnswers(store);
    await store.close();
  });

  it('refuses a row an earlier oncely could not have written, naming it, and changes nothing', () => {
    const path = earlierFile([...EARLIER_ROWS, BAD_ROW]);
    const db = openSqliteDatabase(path);
    const before = db.prepare('SELECT * FROM oncely_ledger ORDER BY key').all();
    assert.throws(
      () => migrateSqliteLedger(db),
      (e) =>
        isOncelyError(e) &&
        e.code === 'ledger_migration' &&
        /key "broken" has no body/.test(e.message) &&
        /nothing was changed/.test(e.message),
    );
    assert.equal(db.inTransaction, false);
    assert.deepEqual(tables(db), ['oncely_ledger'], 'no table made, none renamed');
    assert.deepEqual(db.prepare('SELECT * FROM oncely_ledger ORDER BY key').all(), before);
    assert.equal(
      (
        db
          .prepare(`SELECT type FROM pragma_table_info('oncely_ledger') WHERE name = 'fingerprint'`)
          .get() as { type: string }
      ).type,
      'TEXT',
    );
    db.close();
  });

  it('refuses a table that is not a ledger, and finds nothing to do where there is no table', () => {
    const path = join(dir, `m-${++n}.db`);
    const db = openSqliteDatabase(path);
    assert.deepEqual(migrateSqliteLedger(db), {
      table: 'oncely_ledger',
      found: 'missing',
      receipts: 0,
      tombstones: 0,
    });
    db.exec('CREATE TABLE oncely_ledger (scope TEXT, key TEXT, fingerprint TEXT)');
    assert.throws(
      () => migrateSqliteLedger(db),
      (e) => isOncelyError(e) && e.code === 'ledger_migration' && /no column state/.test(e.message),
    );
    assert.deepEqual(tables(db), ['oncely_ledger']);
    db.close();
  });
});
