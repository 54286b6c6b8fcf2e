import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError, isOncelyError } from '#oncely/contract/errors.js';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteDatabase,
} from '#oncely/stores/sqlite/index.js';
import { sqliteSweep, type BacklogCursor } from '#oncely/stores/ledger/sqlite/sqlite-sweep.js';
import { READER_CACHE_KIB } from '#oncely/stores/ledger/sqlite/sqlite-store.js';
import { turnsUntil } from '../support/turns-until.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-sqlite-store-');
let n = 0;
const file = () => join(dir, `s-${++n}.db`);
const req = (key: string) => ({ scope: 's', key, fingerprint: 'f' });

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

  it('looks a key up on the idle writer (its page cache survives its own commits), on the reader while a write is open', async () => {
    const path = file();
    const lookups: string[] = [];
    // Each connection the store opens, with the ledger lookups it serves recorded under its role.
    const roles = ['writer', 'reader'];
    const store = createSqliteStore({
      database: () => watched(openSqliteDatabase(path), roles.shift()!, lookups),
    });
    const ledger = createLedger({ store });
    assert.equal((await ledger.execute(req('a'), () => jsonReceipt(201, {}))).kind, 'executed');
    assert.deepEqual(lookups.splice(0), ['writer'], "a new key's claim read it on the idle writer");
    const held = await ledger.execute(req('b'), async (tx) => {
      await tx.begin(); // the effect holds the writer: a lookup must not wait for it
      assert.equal((await ledger.lookup('s', 'a')).kind, 'found');
      return jsonReceipt(201, {});
    });
    assert.equal(held.kind, 'executed');
    assert.deepEqual(
      lookups.splice(0),
      ['writer', 'reader'],
      "b's claim on the idle writer, the lookup inside its effect on the reader",
    );
    // A claim joins a batch that commits on the next turn: until then, reads go to the reader,
    // which does not see the claim yet (the writer would).
    const fingerprint = 'a'.repeat(64);
    const entry = { scope: 's', key: 'c', fingerprint, token: 't', state: 'in_flight' as const };
    const at = { firstSeenAt: 1, leaseExpiresAt: 2e12, expiresAt: 2e12 };
    assert.deepEqual(await store.claim({ ...entry, ...at }), { won: true });
    assert.equal(await store.get('s', 'c'), undefined);
    assert.deepEqual(lookups.splice(0), ['writer', 'reader']);
    await new Promise<void>((resolve) => setImmediate(resolve)); // the batch commits
    assert.equal((await store.get('s', 'c'))?.state, 'in_flight');
    assert.deepEqual(lookups.splice(0), ['writer']);
    await store.close();
  });

  it('a lookup the idle writer cannot make (SQLITE_BUSY: its busy_timeout is 0) goes to the reader', async () => {
    const path = file();
    const lookups: string[] = [];
    const roles = ['writer', 'reader'];
    let busy = 0;
    const store = createSqliteStore({
      database: () =>
        watched(openSqliteDatabase(path), roles.shift()!, lookups, (role) => {
          if (role === 'writer' && busy-- > 0)
            throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        }),
    });
    const ledger = createLedger({ store });
    assert.equal((await ledger.execute(req('a'), () => jsonReceipt(201, {}))).kind, 'executed');
    lookups.length = 0;
    busy = 1;
    assert.equal((await ledger.lookup('s', 'a')).kind, 'found');
    assert.deepEqual(lookups, ['writer', 'reader']);
    await store.close();
  });

  it('gives the read connection a small page cache: SQLite empties it after every commit anyway', async () => {
    const path = file();
    const opened: SqliteDatabase[] = [];
    const store = createSqliteStore({
      database: () => {
        const db = openSqliteDatabase(path);
        opened.push(db);
        return db;
      },
    });
    await store.ready?.();
    const [writer, reader] = opened;
    assert.equal(reader?.pragma('cache_size', { simple: true }), -READER_CACHE_KIB);
    assert.notEqual(writer?.pragma('cache_size', { simple: true }), -READER_CACHE_KIB);
    await store.close();
  });

  it('an idle writer answers what another process committed since its last write', async () => {
    const path = file();
    const here = createSqliteStore({ database: () => openSqliteDatabase(path) });
    const there = createSqliteStore({ database: () => openSqliteDatabase(path) });
    const mine = createLedger({ store: here });
    assert.equal((await mine.execute(req('x'), () => jsonReceipt(201, {}))).kind, 'executed');
    const theirs = await createLedger({ store: there }).execute(req('y'), () =>
      jsonReceipt(202, { by: 'there' }),
    );
    assert.equal(theirs.kind, 'executed');
    const replay = await mine.execute(req('y'), () => jsonReceipt(500, {}));
    assert.equal(replay.kind, 'replayed');
    assert.equal(replay.kind === 'replayed' && replay.receipt.status, 202);
    await here.close();
    await there.close();
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
        isOncelyError(e) &&
        e.code === 'ledger_layout' &&
        /earlier oncely; run `npx oncely ledger migrate`/.test(e.message),
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

  it('housekeeping runs in turns: a write issued meanwhile waits for one turn, not the whole round', async () => {
    const db = openSqliteDatabase(file());
    const done: string[] = [];
    const spied = recordingSql(db, (source) => {
      if (/wal_checkpoint|incremental_vacuum/.test(source)) done.push(source);
      if (/^ANALYZE/.test(source)) done.push('ANALYZE');
    });
    const store = createSqliteStore({ database: spied });
    // Statistics gone stale: a table that grew, with an index a query used.
    await store.write((tx) => {
      tx.exec('CREATE TABLE filler (n INTEGER, b BLOB); CREATE INDEX filler_n ON filler (n)');
      for (let i = 0; i < 2000; i++) tx.run('INSERT INTO filler VALUES (?, randomblob(2000))', i);
      tx.get('SELECT count(*) FROM filler WHERE n = 7');
      tx.exec('DELETE FROM filler WHERE n % 2 = 0');
    });
    const round = store.housekeep();
    const write = store.write(() => void done.push('the write'));
    await Promise.all([round, write]);
    assert.ok(done.includes('ANALYZE'), `the round analysed a stale table: ${done.join(', ')}`);
    assert.ok(
      done.indexOf('the write') < done.indexOf('wal_checkpoint(PASSIVE)'),
      `the write went between two turns: ${done.join(', ')}`,
    );
    await store.close();
    db.close();
  });

  it("waits for another process's write lock in the event loop, not in SQLite's busy handler", async () => {
    const path = file();
    const clock = new VirtualClock({ autoAdvance: false });
    const store = createSqliteStore({
      database: () => openSqliteDatabase(path),
      clock,
      busyTimeoutMs: 50,
    });
    await store.write((tx) => tx.exec('CREATE TABLE t (n INTEGER)'));
    const other = openSqliteDatabase(path); // another process's connection on the same file
    other.exec('BEGIN IMMEDIATE');
    let done = false;
    const write = store.write((tx) => tx.run('INSERT INTO t VALUES (1)')).then(() => (done = true));
    // Waiting inside SQLite would block right here, synchronously, for the busy timeout; instead
    // the write sleeps on the store's clock and reads go on meanwhile.
    await turnsUntil(() => clock.pendingCount === 1);
    assert.equal(
      (await store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM t')))?.n,
      0,
    );
    await clock.advance(10);
    assert.equal(done, false, 'still locked: still waiting');
    other.exec('COMMIT');
    await clock.advance(1);
    await write;
    assert.equal(
      (await store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM t')))?.n,
      1,
    );

    // A lock held past busyTimeoutMs: the write gives up with SQLite's own busy error, and the
    // store takes the next write once the lock is free.
    other.exec('BEGIN IMMEDIATE');
    const refused = store.write((tx) => tx.run('INSERT INTO t VALUES (2)'));
    const outcome = refused.then(
      () => 'written',
      (error: { code?: string }) => error.code,
    );
    await turnsUntil(() => clock.pendingCount === 1);
    await clock.advance(50);
    assert.equal(await outcome, 'SQLITE_BUSY');
    other.exec('COMMIT');
    await store.write((tx) => tx.run('INSERT INTO t VALUES (3)'));
    const rows = await store.read((tx) => tx.all<{ n: number }>('SELECT n FROM t ORDER BY n'));
    assert.deepEqual(
      rows.map((r) => r.n),
      [1, 3],
    );
    other.close();
    await store.close();
  });

  it('a sweep step commits without an fsync (synchronous = NORMAL) and puts the durable level back', async () => {
    const db = openSqliteDatabase(file());
    const pragmas: string[] = [];
    const spied = recordingSql(db, (source) => {
      if (/^(synchronous|busy_timeout|BEGIN|COMMIT)/.test(source)) pragmas.push(source);
    });
    const store = createSqliteStore({ database: spied });
    const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
    const ledger = createLedger({ store, clock, retentionMs: 60_000 });
    await ledger.execute(req('old'), () => jsonReceipt(201, {}));
    pragmas.length = 0;
    const step = await store.sweep(clock.now() + 60_000, 0, 10);
    assert.deepEqual(step, { tombstoned: 1, deleted: 0 });
    assert.deepEqual(pragmas, [
      'synchronous = NORMAL',
      'BEGIN IMMEDIATE',
      'COMMIT',
      'synchronous = FULL',
    ]);
    await store.close();
    db.close();
  });

  it('counts due rows in chunks that resume exactly where the last one stopped, ties included', () => {
    const db = openSqliteDatabase(':memory:');
    db.exec(`CREATE TABLE live (scope TEXT, key TEXT, expires_at INTEGER, PRIMARY KEY (scope, key)) WITHOUT ROWID;
      CREATE INDEX live_e ON live (expires_at);
      CREATE TABLE graves (scope TEXT, key TEXT, expires_at INTEGER, PRIMARY KEY (scope, key)) WITHOUT ROWID;
      CREATE INDEX graves_e ON graves (expires_at);`);
    const insert = (table: string, n: number, due: (i: number) => number) => {
      const statement = db.prepare(`INSERT INTO ${table} VALUES ('s', ?, ?)`);
      for (let i = 0; i < n; i++) statement.run(`k-${i}`, due(i));
    };
    // Many rows share an instant (ties across chunk edges); some are not due yet.
    insert('live', 103, (i) => Math.floor(i / 10));
    insert('graves', 41, (i) => (i % 2 === 0 ? 5 : 50));
    const sweep = sqliteSweep(
      { ledgerTable: 'live', tombstoneTable: 'graves', synchronous: 'FULL' },
      () => db,
      (sql) => db.prepare(sql),
    );
    const read = (sql: string) => db.prepare(sql);
    const count = (chunk: number) => {
      let total = 0;
      let calls = 0;
      let cursor: BacklogCursor | undefined;
      do {
        const part = sweep.countDue(8, cursor, chunk, read);
        total += part.count;
        cursor = part.next;
        calls++;
      } while (cursor);
      return { total, calls };
    };
    const due = 90 + 21; // live: instants 0..8 (90 rows); graves: the 21 at instant 5
    assert.deepEqual(count(1000), { total: due, calls: 2 });
    assert.deepEqual(count(7), {
      total: due,
      calls: Math.floor(90 / 7) + 1 + Math.floor(21 / 7) + 1,
    });
    assert.equal(count(1).total, due);
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

/** `db` with every `pragma` and `exec` source handed to `record` before it runs. */
function recordingSql<D extends object>(db: D, record: (source: string) => void): D {
  return new Proxy(db, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function') return value;
      if (name === 'pragma' || name === 'exec')
        return (source: string, ...rest: unknown[]) => {
          record(source);
          return (value as (...args: unknown[]) => unknown).call(target, source, ...rest);
        };
      return value.bind(target);
    },
  });
}

/**
 * `db` with every ledger lookup (the store's SELECT by scope and key) recorded as `role`, after
 * which `before` may throw in its place.
 */
function watched(
  db: SqliteDatabase,
  role: string,
  lookups: string[],
  before: (role: string) => void = () => {},
): SqliteDatabase {
  return new Proxy(db, {
    get(target, property) {
      if (property !== 'prepare') {
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (source: string) => {
        const statement = target.prepare(source);
        if (!/^SELECT \* FROM oncely_ledger WHERE scope = \? AND key = \?$/.test(source))
          return statement;
        return {
          run: (...params: unknown[]) => statement.run(...params),
          all: (...params: unknown[]) => statement.all(...params),
          get: (...params: unknown[]) => (
            lookups.push(role), before(role), statement.get(...params)
          ),
        };
      };
    },
  });
}
