import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

// Before: `outbox list --journal nodir/missing.db` made the folder and the file and said "no
// intents"; `list` on another SQLite file added three tables to it; `outbox ui --journal
// notsqlite.db` started, then answered 500 to every call.
const dir = tempDir('oncely-journal-file-');

const tablesOf = (file: string): string[] => {
  const db = openSqliteDatabase(file);
  try {
    return (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
};

const refusedOneLine = (run: { status: number; stderr: string }, why: RegExp): void => {
  assert.equal(run.status, 2, run.stderr);
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, why);
};

test('a --journal path that does not exist is refused, and nothing is made, unless --create', async () => {
  const missing = join(dir, 'nodir', 'missing.db');
  for (const args of [
    ['outbox', 'list'],
    ['outbox', 'run'],
    ['outbox', 'endpoint', 'list'],
    ['deliver', 'http://127.0.0.1:9/h', '--data', '{}'],
  ]) {
    const run = await runOncely([...args, '--journal', missing]);
    refusedOneLine(
      run,
      /^oncely: invalid option --journal: got ".*missing\.db", expected an existing journal file .*--create/,
    );
  }
  assert.equal(existsSync(join(dir, 'nodir')), false, 'no folder made');
  const created = await runOncely(['outbox', 'list', '--journal', missing, '--create']);
  assert.equal(created.status, 0, created.stderr);
  assert.equal(created.stdout, 'no intents\n');
  assert.ok(tablesOf(missing).includes('oncely_intents'));
  assert.equal(
    (await runOncely(['outbox', 'list', '--journal', missing])).status,
    0,
    'it exists now',
  );
});

test('a file that is not SQLite is refused at open, the view included, and left as it was', async () => {
  const file = join(dir, 'notsqlite.db');
  writeFileSync(file, 'hello, not a database\n');
  for (const args of [
    ['outbox', 'list'],
    ['outbox', 'ui', '--port', '0'],
    ['outbox', 'add', 'http://127.0.0.1:9/h', '--data', '{}', '--create'],
  ]) {
    const run = await runOncely([...args, '--journal', file]);
    refusedOneLine(
      run,
      /expected an oncely journal \(this file is not a SQLite database; it was left unchanged\)/,
    );
  }
  assert.equal(readFileSync(file, 'utf8'), 'hello, not a database\n');
});

test('another SQLite database is refused and never altered; one holding a journal is taken', async () => {
  const other = join(dir, 'other.db');
  const db = openSqliteDatabase(other);
  db.exec('CREATE TABLE orders (id TEXT PRIMARY KEY)');
  db.close();
  for (const args of [
    ['outbox', 'list'],
    ['outbox', 'list', '--create'],
    ['outbox', 'ui', '--port', '0'],
  ]) {
    const run = await runOncely([...args, '--journal', other]);
    refusedOneLine(run, /this SQLite database has no oncely_intents table; it was left unchanged/);
  }
  assert.deepEqual(tablesOf(other), ['orders'], 'no table added');

  // The transactional outbox: the application's own database, the journal's tables in it.
  const shop = join(dir, 'shop.db');
  assert.equal((await runOncely(['outbox', 'list', '--journal', shop, '--create'])).status, 0);
  const app = openSqliteDatabase(shop);
  app.exec('CREATE TABLE orders (id TEXT PRIMARY KEY)');
  app.close();
  assert.equal((await runOncely(['outbox', 'list', '--journal', shop])).status, 0);
});
