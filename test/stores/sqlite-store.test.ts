import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError, isOncelyError } from '../../src/contract/errors.js';
import { createLedger, jsonReceipt } from '../../src/ledger/index.js';
import { createSqliteStore, openSqliteDatabase } from '../../src/stores/sqlite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'oncely-sqlite-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `s-${++n}.db`);

describe('SQLite store specifics', () => {
  it('commits durably: WAL with synchronous = FULL', async () => {
    const db = openSqliteDatabase(file());
    const store = createSqliteStore({ database: db });
    await store.read(() => undefined);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('synchronous', { simple: true }), 2); // 2 = FULL
    await store.close();
    assert.equal(
      db.pragma('journal_mode', { simple: true }),
      'wal',
      'a connection it was given stays open',
    );
    db.close();
  });

  it('never lets two async transactions interleave on its one connection', async () => {
    const path = file();
    const store = createSqliteStore({ database: () => openSqliteDatabase(path) });
    await store.write((tx) => tx.exec('CREATE TABLE log (who TEXT, step INTEGER)'));
    const order: string[] = [];
    const work = (who: string) =>
      store.transaction(async (tx) => {
        await tx.begin();
        for (let step = 0; step < 3; step++) {
          tx.run('INSERT INTO log VALUES (?, ?)', who, step);
          order.push(`${who}${step}`);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        if (who === 'b') throw new Error('b rolls back');
      });
    const results = await Promise.allSettled([work('a'), work('b'), work('c')]);
    assert.deepEqual(order, ['a0', 'a1', 'a2', 'b0', 'b1', 'b2', 'c0', 'c1', 'c2']);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    const rows = await store.read((tx) =>
      tx.all<{ who: string }>('SELECT who FROM log ORDER BY rowid'),
    );
    assert.deepEqual(
      rows.map((r) => r.who).join(''),
      'aaaccc',
      "b's rollback took none of a's or c's rows with it",
    );
    await store.close();
  });

  it('answers a lookup from inside an effect that holds the writer: reads never wait for it', async () => {
    const path = file();
    const store = createSqliteStore({ database: () => openSqliteDatabase(path) });
    const ledger = createLedger({ store });
    const inner = await ledger.execute(
      { scope: 's', key: 'outer', fingerprint: 'f' },
      async (tx) => {
        await new Promise<void>((resolve) => setImmediate(resolve)); // the claim's batch commits
        await tx.begin();
        assert.equal((await ledger.lookup('s', 'other')).kind, 'never_seen');
        assert.equal((await ledger.lookup('s', 'outer')).kind, 'in_flight');
        return jsonReceipt(201, {});
      },
    );
    assert.equal(inner.kind, 'executed');
    await store.close();
  });

  it('refuses a ledger table of the earlier text-fingerprint layout at open, naming what to do', async () => {
    const path = file();
    const old = openSqliteDatabase(path);
    old.exec(
      'CREATE TABLE oncely_ledger (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, PRIMARY KEY (scope, key))',
    );
    old.close();
    const store = createSqliteStore({ database: () => openSqliteDatabase(path) });
    await assert.rejects(
      store.read(() => undefined),
      (e) =>
        isOncelyError(e) && e.code === 'ledger_layout' && /earlier oncely; drop it/.test(e.message),
    );
    await store.close();
  });

  it('housekeeping: a fresh file vacuums incrementally, and a round returns pages a sweep freed', async () => {
    const db = openSqliteDatabase(file());
    const store = createSqliteStore({ database: db });
    await store.read((tx) => {
      tx.exec('CREATE TABLE filler (b BLOB)');
      for (let i = 0; i < 200; i++) tx.run('INSERT INTO filler VALUES (randomblob(4000))');
      tx.exec('DELETE FROM filler');
    });
    assert.equal(db.pragma('auto_vacuum', { simple: true }), 2, '2 = INCREMENTAL');
    const freed = Number(db.pragma('freelist_count', { simple: true }));
    assert.ok(freed > 100, `pages free before: ${freed}`);
    const report = await store.housekeep();
    assert.equal(report.pagesFreed, freed);
    assert.equal(report.freePagesLeft, 0);
    assert.equal(db.pragma('freelist_count', { simple: true }), 0);
    await store.close();
    db.close();
  });

  it('validates its options and refuses use after close', async () => {
    assert.throws(
      () =>
        createSqliteStore({
          database: () => openSqliteDatabase(':memory:'),
          table: 'x; DROP TABLE y',
        }),
      (e) => isInvalidOptionError(e) && e.option === 'table',
    );
    assert.throws(
      () => createSqliteStore({ database: 'ledger.db' as never }),
      (e) => isInvalidOptionError(e) && e.option === 'database',
    );
    const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
    await store.close();
    await assert.rejects(store.get('s', 'k'), /sqlite store is closed/);
  });
});
