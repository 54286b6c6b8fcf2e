import { join } from 'node:path';
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import type { SqliteDatabase } from '#oncely/stores/sqlite-driver/sqlite-database.js';
import { InvalidOptionError } from '#oncely/contract/errors.js';
import { scriptedFetch } from './journal-conformance.js';
import { tempDir } from '../support/temp-dir.js';
import { turnsUntil } from '../support/turns-until.js';

const dir = tempDir('oncely-worker-durability-');
let n = 0;
const TARGET = 'http://receiver.test/hooks';

/** SQLite's `synchronous` levels, as PRAGMA synchronous reads them. */
const NORMAL = 1;
const FULL = 2;

/** A connection that notes the `synchronous` level in force at each COMMIT run on it. */
function notingCommits(db: SqliteDatabase) {
  const levels: number[] = [];
  const level = () => Number(db.pragma('synchronous', { simple: true }));
  const noted = new Proxy(db, {
    get(target, property) {
      if (property === 'exec')
        return (source: string) => {
          if (/^\s*COMMIT\b/i.test(source)) levels.push(level());
          return target.exec(source);
        };
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: noted, levels, level };
}

async function openRig(options: { workerDurability?: 'durable' | 'process' } = {}) {
  const file = join(dir, `journal-${++n}.db`);
  const { db, levels, level } = notingCommits(openSqliteDatabase(file));
  const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
  const store = createSqliteJournalStore({ database: () => db, clock, ...options });
  await store.ready();
  const journal = createJournal({ store, clock });
  const worker = createOutboxWorker({ store, clock, fetch: scriptedFetch([200]).fetch });
  levels.length = 0;
  return { file, db, levels, level, store, journal, worker };
}

describe('SQLite journal: what the worker writes survive (workerDurability)', () => {
  it("by default a record fsyncs, the worker's claim and settlement do not", async () => {
    const { levels, level, store, journal, worker } = await openRig();
    await journal.record({ key: 'k1', target: TARGET, body: '{}' });
    assert.deepEqual(levels, [FULL], 'the record');
    levels.length = 0;
    const pass = await worker.runOnce();
    assert.equal(pass.sent, 1);
    assert.deepEqual(levels, [NORMAL, NORMAL], 'the claim (its attempt started), the settlement');
    assert.equal(level(), FULL, 'the connection back at FULL after each');
    assert.equal((await journal.get('k1'))?.state, 'delivered');
    levels.length = 0;
    await journal.record({ key: 'k2', target: TARGET, body: '{}' });
    await journal.cancel('k2');
    assert.ok(
      levels.every((x) => x === FULL),
      'a cancel and a record: FULL',
    );
    await store.close();
  });

  it("the app's own transaction on the store's connection commits at FULL after a pass", async () => {
    const { db, levels, store, journal, worker } = await openRig();
    await journal.record({ key: 'k1', target: TARGET, body: '{}' });
    await worker.runOnce();
    levels.length = 0;
    db.exec('BEGIN IMMEDIATE');
    await journal.recordWithin(db, { key: 'in-tx', target: TARGET, body: '{}' });
    db.exec('COMMIT');
    assert.deepEqual(levels, [FULL]);
    await store.close();
  });

  it("'durable': every commit fsyncs", async () => {
    const { levels, store, journal, worker } = await openRig({ workerDurability: 'durable' });
    await journal.record({ key: 'k1', target: TARGET, body: '{}' });
    await worker.runOnce();
    assert.deepEqual(levels, [FULL, FULL, FULL]);
    await store.close();
  });

  it('while a claim waits for the lock, the connection stays at FULL', async () => {
    const file = join(dir, `journal-${++n}.db`);
    const { db, levels, level } = notingCommits(openSqliteDatabase(file));
    const clock = new VirtualClock({ startAt: 1_700_000_000_000, autoAdvance: false });
    const store = createSqliteJournalStore({ database: () => db, clock });
    const journal = createJournal({ store, clock });
    await journal.record({ key: 'k1', target: TARGET, body: '{}' });
    const other = openSqliteDatabase(file); // another process holds the write lock
    other.exec('BEGIN IMMEDIATE');
    levels.length = 0;
    const claim = store.capabilities.claimStarting!.claim('w', clock.now(), 60_000, 16);
    await turnsUntil(() => clock.pendingCount === 1); // asleep between two tries
    assert.equal(level(), FULL, 'lowered only from BEGIN to COMMIT, not while waiting');
    other.exec('COMMIT');
    await clock.advance(1);
    assert.equal((await claim).length, 1);
    assert.deepEqual(levels, [NORMAL]);
    assert.equal(level(), FULL);
    other.close();
    await store.close();
  });

  it('a claim runs its statements and the two level changes, and reads no level back', async () => {
    const file = join(dir, `journal-${++n}.db`);
    const log: string[] = [];
    const store = createSqliteJournalStore({
      database: () =>
        new Database(file, {
          verbose: (sql) => log.push(String(sql).trim().split(/\s+/).slice(0, 3).join(' ')),
        }) as unknown as SqliteDatabase,
    });
    const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
    await createJournal({ store, clock }).record({ key: 'k1', target: TARGET, body: '{}' });
    log.length = 0;
    const claimed = await store.capabilities.claimStarting!.claim('w', clock.now(), 60_000, 16);
    assert.equal(claimed.length, 1);
    assert.deepEqual(log, [
      'PRAGMA synchronous =',
      'BEGIN IMMEDIATE',
      'SELECT key, open_attempt',
      'UPDATE oncely_intents SET',
      'COMMIT',
      'PRAGMA synchronous =',
    ]);
    await store.close();
  });

  it('an unknown workerDurability is refused before anything opens', () => {
    let opened = false;
    assert.throws(
      () =>
        createSqliteJournalStore({
          database: () => {
            opened = true;
            return openSqliteDatabase(':memory:');
          },
          workerDurability: 'sometimes' as 'durable',
        }),
      (error: unknown) =>
        error instanceof InvalidOptionError && /workerDurability/.test(String(error)),
    );
    assert.equal(opened, false);
  });
});
