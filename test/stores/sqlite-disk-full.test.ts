import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLedger } from '#oncely/ledger/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';

// bench/chaos: a receiver whose disk is full must answer 503 (the ledger is unavailable), not 500
// (the effect's own failure), when it is the effect's statement that finds no room. A full disk
// is made here with max_page_count: SQLite answers SQLITE_FULL, as it does on ENOSPC or EFBIG.
it('an effect whose write finds the database full is unavailable, and the key stays free', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-disk-full-'));
  const database = openSqliteDatabase(join(dir, 'ledger.db'));
  try {
    database.exec('CREATE TABLE effects (id TEXT, payload BLOB)');
    const ledger = createLedger({ store: createSqliteStore({ database }) });
    await ledger.ready();
    const pages = Number(database.pragma('page_count', { simple: true }));
    database.pragma(`max_page_count = ${pages + 2}`);
    const request = { scope: 'chaos', key: 'k-1', fingerprint: 'f'.repeat(64) };
    const write = (bytes: number) => async (tx: SqliteTx) => {
      await tx.begin();
      tx.run('INSERT INTO effects (id, payload) VALUES (?, ?)', 'k-1', Buffer.alloc(bytes));
      return { status: 201, headers: [], body: new Uint8Array() };
    };
    const full = await ledger.execute(request, write(1_000_000)).then(
      (result) => result.kind,
      (error: Error) => `threw ${error.message}`,
    );
    assert.equal(full, 'unavailable');
    database.pragma('max_page_count = 1073741823'); // room again
    const next = await ledger.execute(request, write(10));
    assert.equal(next.kind, 'executed', 'the key was given back, so the retry runs the effect');
    assert.equal(database.prepare('SELECT count(*) AS n FROM effects').get()?.['n' as never], 1);
  } finally {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
