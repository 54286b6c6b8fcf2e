import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import type { Durability } from '#oncely/ledger/ledger-store.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The SQLite store's write path, checked without timing: group commit (requests that arrive
 * together share one COMMIT, hence one fsync), a savepoint per effect (one request's rollback
 * undoes nothing of another's), the durability level of every COMMIT, and a writer that nobody
 * holds while an effect awaits before its first statement. The writer is a real better-sqlite3
 * file in WAL mode wrapped in a recorder (the store depends only on the SqliteDatabase slice):
 * each write and each BEGIN/COMMIT is logged with the level SQLite itself reports at that moment.
 */
const START_AT = 1_700_000_000_000;
const LEVELS: Record<number, string> = { 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' };

const dir = tempDir('oncely-sqlite-durability-');
let n = 0;

function recorder(inner: SqliteDatabase): { db: SqliteDatabase; take(): string[] } {
  let events: string[] = [];
  const level = (): string =>
    LEVELS[inner.pragma('synchronous', { simple: true }) as number] ?? '?';
  const note = (what: string): void =>
    void events.push(`${what} @${level()}${inner.inTransaction ? ' in tx' : ''}`);
  const db: SqliteDatabase = {
    prepare(source) {
      const statement = inner.prepare(source);
      const write = /^\s*(INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)/i.exec(source);
      const control = /^(BEGIN|COMMIT|ROLLBACK)\b/.test(source); // the store prepares COMMIT
      return {
        run: (...params) => {
          if (write) note(`${write[1]!.split(' ')[0]!.toLowerCase()} ${write[2]}`);
          if (control) note(source);
          return statement.run(...params);
        },
        get: (...params) => statement.get(...params),
        all: (...params) => statement.all(...params),
      };
    },
    exec(source) {
      if (/^(BEGIN|COMMIT|ROLLBACK)\b/.test(source)) note(source);
      return inner.exec(source);
    },
    pragma: (source, options) => inner.pragma(source, options),
    close: () => inner.close(),
    get inTransaction() {
      return inner.inTransaction;
    },
  };
  return {
    db,
    take: () => {
      const taken = events;
      events = [];
      return taken;
    },
  };
}

async function setUp(durability: Durability = 'durable', file = join(dir, `d-${++n}.db`)) {
  let rec: ReturnType<typeof recorder> | undefined;
  // The first connection the factory opens is the writer (recorded); the second, the reader.
  const store = createSqliteStore({
    database: () =>
      rec ? openSqliteDatabase(file) : (rec = recorder(openSqliteDatabase(file))).db,
    durability,
  });
  await store.write((tx) => tx.exec('CREATE TABLE IF NOT EXISTS effects (id TEXT NOT NULL)'));
  const clock = new VirtualClock({ startAt: START_AT });
  const ledger = createLedger({ store, clock, leaseMs: 30_000 });
  const effect =
    (id: string, status = 201) =>
    async (tx: SqliteTx) => {
      await tx.begin();
      tx.run('INSERT INTO effects (id) VALUES (?)', id);
      return jsonReceipt(status, { id });
    };
  const count = (id: string) =>
    store.read(
      (tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM effects WHERE id = ?', id)!.n,
    );
  rec!.take();
  return { rec: rec!, store, ledger, effect, count };
}

const req = (key: string) => ({ scope: 'alice', key, fingerprint: 'fp' });

describe('SQLite store: group commit, savepoints and durability', () => {
  it('a keyed request is one transaction: claim, effect and receipt share one COMMIT at FULL', async () => {
    const { rec, store, ledger, effect } = await setUp();
    assert.equal((await ledger.execute(req('k1'), effect('e1'))).kind, 'executed');
    // The claim is made under the batch's write lock and kept in memory: the receipt, written
    // before that batch commits, is the key's one row write (pending-claims.ts).
    assert.deepEqual(rec.take(), [
      'BEGIN IMMEDIATE @FULL',
      'insert effects @FULL in tx',
      'insert oncely_ledger @FULL in tx',
      'COMMIT @FULL in tx',
    ]);
    assert.equal((await ledger.execute(req('k1'), effect('e1'))).kind, 'replayed');
    assert.deepEqual(
      rec.take(),
      [],
      'a replay is answered from the read connection and writes nothing',
    );
    await store.close();
  });

  it('a claim still running when its batch commits is written in it, seen by others, then completed', async () => {
    const { rec, store, ledger, effect, count } = await setUp('process');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = ledger.execute(req('slow'), async (tx) => {
      await gate; // the batch of the claim commits meanwhile
      return effect('slow')(tx);
    });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(rec.take(), [
      'BEGIN IMMEDIATE @NORMAL',
      'insert oncely_ledger @NORMAL in tx',
      'COMMIT @NORMAL in tx',
    ]);
    const other = openSqliteDatabase(join(dir, `d-${n}.db`));
    const row = other.prepare('SELECT state FROM oncely_ledger WHERE key = ?').get('slow') as
      | { state: string }
      | undefined;
    other.close();
    assert.equal(row?.state, 'in_flight', 'another connection (another process) sees the claim');
    const duplicate = await ledger.execute(req('slow'), effect('never'));
    assert.equal(duplicate.kind, 'in_flight');
    release();
    assert.equal((await running).kind, 'executed');
    assert.deepEqual(rec.take(), [
      'BEGIN IMMEDIATE @NORMAL',
      'insert effects @NORMAL in tx',
      'update oncely_ledger @NORMAL in tx',
      'COMMIT @NORMAL in tx',
    ]);
    assert.equal(await count('slow'), 1);
    assert.equal(await count('never'), 0);
    await store.close();
  });

  it('concurrent requests share commits: twenty requests, fewer COMMITs, every effect there once', async () => {
    const { rec, store, ledger, effect, count } = await setUp();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ledger.execute(req(`g-${i}`), effect(`g-${i}`))),
    );
    assert.ok(results.every((r) => r.kind === 'executed'));
    const commits = rec.take().filter((e) => e.startsWith('COMMIT'));
    assert.ok(
      commits.length >= 1 && commits.length < 20,
      `${commits.length} commits for 20 requests`,
    );
    for (let i = 0; i < 20; i++) assert.equal(await count(`g-${i}`), 1);
    await store.close();
  });

  it("one request's rollback inside a shared batch undoes its own writes only", async () => {
    const { store, ledger, effect, count } = await setUp();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => {
        if (i % 4 === 1) return ledger.execute(req(`r-${i}`), effect(`r-${i}`, 503));
        if (i % 4 === 2)
          return ledger.execute(
            req(`r-${i}`),
            async (tx) => (await effect(`r-${i}`)(tx), assert.fail('thrown after writing')),
          );
        return ledger.execute(req(`r-${i}`), effect(`r-${i}`));
      }),
    );
    for (let i = 0; i < 12; i++) {
      const kept = i % 4 === 0 || i % 4 === 3;
      assert.equal(
        await count(`r-${i}`),
        kept ? 1 : 0,
        `request ${i}: ${JSON.stringify(outcomes[i]?.status)}`,
      );
      assert.equal((await ledger.lookup('alice', `r-${i}`)).kind, kept ? 'found' : 'never_seen');
    }
    await store.close();
  });

  it("the 'process' durability commits at NORMAL: no fsync per commit, safe across a process crash", async () => {
    const { rec, store, ledger, effect } = await setUp('process');
    assert.equal((await ledger.execute(req('p1'), effect('p1'))).kind, 'executed');
    const events = rec.take();
    assert.ok(events.length > 0 && events.every((e) => e.includes('@NORMAL')), events.join('\n'));
    await store.close();
  });

  it('an effect awaiting before its first statement holds nothing: other keys and reads go on', async () => {
    const { store, ledger, effect, count } = await setUp();
    let release!: () => void;
    const slowCall = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const inCall = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow = ledger.execute(req('slow'), async (tx) => {
      started();
      await slowCall; // an HTTP call, say
      return effect('slow')(tx);
    });
    await inCall;
    assert.equal(
      (await ledger.execute(req('fast'), effect('fast'))).kind,
      'executed',
      'another key commits while the slow one awaits',
    );
    assert.equal((await ledger.lookup('alice', 'slow')).kind, 'in_flight');
    release();
    assert.equal((await slow).kind, 'executed');
    assert.equal((await count('slow')) + (await count('fast')), 2);
    await store.close();
  });

  it('a read never waits for an effect that holds the writer', async () => {
    const { store, ledger, effect } = await setUp();
    await ledger.execute(req('done'), effect('done'));
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    let begun!: () => void;
    const holding = new Promise<void>((resolve) => {
      begun = resolve;
    });
    const writer = ledger.execute(req('holder'), async (tx) => {
      await tx.begin();
      tx.run('INSERT INTO effects (id) VALUES (?)', 'holder');
      begun();
      await hold; // holds the writer: the documented cost of awaiting after the first statement
      return jsonReceipt(201, {});
    });
    await holding;
    assert.equal((await ledger.lookup('alice', 'done')).kind, 'found');
    assert.equal((await ledger.execute(req('done'), effect('done'))).kind, 'replayed');
    assert.equal(
      await store.read(
        (tx) => tx.get<{ n: number }>("SELECT count(*) AS n FROM effects WHERE id = 'holder'")!.n,
      ),
      0,
      'reads see committed rows only',
    );
    release();
    assert.equal((await writer).kind, 'executed');
    await store.close();
  });

  it('a statement before begin() is refused with a clear error, and the request rolls back', async () => {
    const { store, ledger, count } = await setUp();
    await assert.rejects(
      ledger.execute(req('eager'), async (tx) => {
        tx.run('INSERT INTO effects (id) VALUES (?)', 'eager');
        return jsonReceipt(201, {});
      }),
      /call `await tx\.begin\(\)` before its first statement/,
    );
    assert.equal(await count('eager'), 0);
    assert.equal((await ledger.lookup('alice', 'eager')).kind, 'never_seen');
    await store.close();
  });

  it('without WAL (":memory:") there is no read connection: reads wait for the open batch to commit', async () => {
    const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
    await store.write((tx) => tx.exec('CREATE TABLE effects (id TEXT NOT NULL)'));
    const ledger = createLedger({ store, clock: new VirtualClock({ startAt: START_AT }) });
    const run = () =>
      ledger.execute(req('m'), async (tx) => {
        await tx.begin();
        tx.run('INSERT INTO effects (id) VALUES (?)', 'm');
        return jsonReceipt(201, {});
      });
    const [a, b] = await Promise.all([run(), run()]);
    assert.deepEqual([a.kind, b.kind].sort(), ['executed', 'in_flight']);
    assert.equal((await run()).kind, 'replayed');
    assert.equal(
      await store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM effects')!.n),
      1,
    );
    await store.close();
  });
});
