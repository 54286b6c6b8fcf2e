// `oncely ledger migrate`: a SQLite ledger file of an earlier layout is carried over, with a
// progress line and a one-line result; a second run finds nothing to do; a bad row is one line,
// a failure exit, and the file as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '#cli/cli/exit.js';
import { LEDGER_COLUMNS } from '#oncely/stores/ledger/ledger-row.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { runOncely } from '../../support/run-cli.js';
import {
  BAD_ROW,
  EARLIER_ROWS,
  assertMigratedAnswers,
  earlierSchema,
} from '../../stores/earlier-ledger-rows.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-migrate-');

function earlierFile(file: string, rows: unknown[][]): void {
  const db = openSqliteDatabase(file);
  db.exec(earlierSchema('oncely_ledger', 'INTEGER', 'BLOB'));
  const insert = db.prepare(
    `INSERT INTO oncely_ledger (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')})`,
  );
  for (const row of rows) insert.run(...row);
  db.close();
}

test('a file of the earlier layout is migrated in place; a second run has nothing to do', async () => {
  const dataDir = join(dir, 'serve-data');
  mkdirSync(dataDir);
  const file = join(dataDir, 'oncely.db');
  earlierFile(file, EARLIER_ROWS);

  const run = await runOncely(['ledger', 'migrate', '--data-dir', dataDir]);
  assert.equal(run.status, EXIT.ok, run.stderr);
  assert.equal(run.stderr, `migrate ${file}: 4 of 4 rows carried over\n`);
  assert.equal(
    run.stdout,
    `migrated oncely_ledger in ${file}: 3 receipts and claims, 1 tombstones\n`,
  );
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  await assertMigratedAnswers(store);
  await store.close();

  const again = await runOncely(['ledger', 'migrate', '--sqlite-file', file]);
  assert.equal(again.status, EXIT.ok, again.stderr);
  assert.equal(
    again.stdout,
    `oncely_ledger in ${file} is already in the current layout: nothing to do\n`,
  );
});

test('a bad row: one line naming it, a failure exit, and the file unchanged', async () => {
  const file = join(dir, 'bad.db');
  earlierFile(file, [...EARLIER_ROWS, BAD_ROW]);
  const run = await runOncely(['ledger', 'migrate', '--sqlite-file', file]);
  assert.equal(run.status, EXIT.failure);
  assert.match(
    run.stderr,
    /^oncely: cannot migrate ledger table oncely_ledger: .*"broken" has no body \(completed\); nothing was changed\n$/,
  );
  const db = openSqliteDatabase(file);
  assert.equal((db.prepare('SELECT count(*) AS n FROM oncely_ledger').get() as { n: number }).n, 5);
  db.close();
});
