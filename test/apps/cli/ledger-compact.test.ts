// `oncely ledger compact`: a SQLite ledger file's free pages go back to the file system, in steps
// for a file the store made, by one VACUUM for an older one; a file that is not there is one line
// and exit 2, and nothing is created.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '#cli/cli/exit.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { COMPACT_PAGES_PER_STEP } from '#oncely/stores/sqlite-driver/sqlite-compact.js';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-compact-');

/** A ledger file with `pages` pages freed (rows written, then deleted); returns the free count. */
async function ledgerWithFreePages(file: string, pages: number): Promise<number> {
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  await store.write((tx) => {
    tx.exec('CREATE TABLE filler (b BLOB)');
    for (let i = 0; i < pages; i++) tx.run('INSERT INTO filler VALUES (randomblob(4000))');
  });
  await store.write((tx) => tx.exec('DELETE FROM filler'));
  await store.close();
  const db = openSqliteDatabase(file);
  const free = Number(db.pragma('freelist_count', { simple: true }));
  db.close();
  return free;
}

const pragma = (file: string, name: string): number => {
  const db = openSqliteDatabase(file);
  try {
    return Number(db.pragma(name, { simple: true }));
  } finally {
    db.close();
  }
};

test('a file the store made is compacted in steps, with a progress line each, and shrinks', async () => {
  const dataDir = join(dir, 'serve-data');
  mkdirSync(dataDir);
  const file = join(dataDir, 'oncely.db');
  const free = await ledgerWithFreePages(file, COMPACT_PAGES_PER_STEP + 500);
  assert.ok(free > COMPACT_PAGES_PER_STEP, `free pages: ${free}`);
  const before = statSync(file).size;

  const run = await runOncely(['ledger', 'compact', '--data-dir', dataDir]);
  assert.equal(run.status, EXIT.ok, run.stderr);
  assert.deepEqual(
    run.stderr.trimEnd().split('\n'),
    [
      `compact ${file}: ${COMPACT_PAGES_PER_STEP} of ${free} free pages handed back`,
      `compact ${file}: ${free} of ${free} free pages handed back`,
    ],
    'two steps',
  );
  assert.match(
    run.stdout,
    new RegExp(
      `^compacted .*oncely\\.db \\(incremental\\): [\\d.]+ MiB -> [\\d.]+ MiB, ${free} pages handed back\\n$`,
    ),
  );
  assert.equal(pragma(file, 'freelist_count'), 0);
  assert.ok(statSync(file).size < before - free * 3000, 'the file itself shrank');
});

test('a file made before incremental vacuum (or --full) is rewritten by VACUUM into that mode', async () => {
  const file = join(dir, 'old.db');
  const old = openSqliteDatabase(file);
  old.exec('CREATE TABLE filler (b BLOB); BEGIN');
  for (let i = 0; i < 300; i++) old.prepare('INSERT INTO filler VALUES (randomblob(4000))').run();
  old.exec('COMMIT; DELETE FROM filler');
  assert.equal(old.pragma('auto_vacuum', { simple: true }), 0, 'NONE');
  old.close();

  const run = await runOncely(['ledger', 'compact', '--sqlite-file', file]);
  assert.equal(run.status, EXIT.ok, run.stderr);
  assert.match(run.stderr, /VACUUM, rewriting the file \(\d+ free pages\)/);
  assert.match(run.stdout, /\(full\)/);
  assert.equal(pragma(file, 'auto_vacuum'), 2, 'INCREMENTAL from now on');
  assert.equal(pragma(file, 'freelist_count'), 0);
});

test('a file that is not there: one line, exit 2, and no file is created', async () => {
  const missing = join(dir, 'nope.db');
  const run = await runOncely(['ledger', 'compact', '--sqlite-file', missing]);
  assert.equal(run.status, EXIT.usage);
  assert.match(run.stderr, /^oncely: .*--sqlite-file.*an existing SQLite ledger file/);
  assert.equal(run.stderr.trimEnd().split('\n').length, 1);
  assert.equal(run.stdout, '');
  assert.equal(existsSync(missing), false);
});

test('ledger compact --help says what it does and when to stop the server', async () => {
  const run = await runOncely(['ledger', 'compact', '--help']);
  assert.equal(run.status, EXIT.ok);
  assert.match(run.stdout, /^Usage: oncely ledger compact \[options\]/);
  assert.match(run.stdout, /--full/);
  assert.match(run.stdout, /stop the server first/);
});
