import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { createSqliteStore } from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-sqlite-statements-');

/** A store whose connections log every statement they run, as its first three words. */
function loggedStore(file: string) {
  const log: string[] = [];
  const open = () => {
    const db = new Database(file, {
      verbose: (sql) => log.push(String(sql).trim().split(/\s+/).slice(0, 3).join(' ')),
    });
    db.pragma('journal_mode = WAL');
    return db;
  };
  const clock = new VirtualClock();
  const store = createSqliteStore({ database: open, durability: 'process', clock });
  return { store, log, clock };
}

describe('SQLite statements per request', () => {
  it('a new key costs one lookup, a look under the write lock, and its section: one row write', async () => {
    const { store, log } = loggedStore(join(dir, 'new.db'));
    await store.write((tx) => tx.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, n INTEGER)'));
    const ledger = createLedger({ store });
    const effect = async (tx: Parameters<typeof store.sql>[0]) => {
      await store.sql(tx).run('INSERT INTO orders (n) VALUES ($1)', [1]);
      return jsonReceipt(201, { ok: true });
    };
    await ledger.execute({ scope: 's', key: 'warm', fingerprint: 'f' }, effect);
    log.length = 0;
    const result = await ledger.execute({ scope: 's', key: 'k', fingerprint: 'f' }, effect);
    assert.equal(result.kind, 'executed');
    assert.deepEqual(log, [
      'SELECT * FROM', // the committed row, if any (none); no tombstone lookup
      'BEGIN IMMEDIATE',
      'SELECT 1 FROM', // the claim: no row under the lock, so the key is this request's
      'SAVEPOINT oncely_section',
      'INSERT INTO orders',
      'RELEASE oncely_section',
      'INSERT INTO oncely_ledger', // the receipt, the key's only row write, with its batch
      'COMMIT',
    ]);
    await store.close();
  });

  it('claims a key whose receipt became a tombstone with the same INSERT as a new one', async () => {
    const { store, clock } = loggedStore(join(dir, 'tombstone.db'));
    const ledger = createLedger({ store, clock, retentionMs: 5_000, tombstoneMs: 10_000 });
    const request = { scope: 's', key: 'k', fingerprint: 'f' };
    let runs = 0;
    const effect = async () => jsonReceipt(201, { run: ++runs });
    await ledger.execute(request, effect);
    await clock.advance(5_000);
    await ledger.purgeExpired();
    assert.equal((await ledger.lookup('s', 'k')).kind, 'expired');
    const again = await ledger.execute({ ...request, fingerprint: 'other' }, effect);
    assert.equal(again.kind, 'executed', 'past retention the key is new again');
    assert.equal(runs, 2);
    assert.equal((await ledger.lookup('s', 'k')).kind, 'found');
    await store.close();
  });
});
