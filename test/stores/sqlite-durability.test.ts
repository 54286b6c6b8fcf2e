import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt } from '../../src/ledger/index.js';
import { createSqliteStore, openSqliteDatabase, type SqliteDatabase, type SqliteTx } from '../../src/stores/sqlite/index.js';
import { VirtualClock } from '../../src/time/index.js';
import { inFlight } from './conformance.js';

/**
 * The SQLite store's durability rule, checked without timing: the effect + receipt commit (and
 * every other COMMIT) runs at synchronous = FULL; the ledger's single-row bookkeeping writes
 * (claim, takeover, release, purge) run at NORMAL, outside any transaction, with FULL restored
 * right after. The connection is a real better-sqlite3 file in WAL mode wrapped in a recorder
 * (the store depends only on the SqliteDatabase slice): each write and each BEGIN/COMMIT is
 * logged with the level SQLite itself reports at that moment, so a pragma that was sent but did
 * not act (a cached prepared PRAGMA does not act on re-run) would show up as a wrong level.
 */
const START_AT = 1_700_000_000_000;
const LEASE_MS = 30_000;
const RETENTION_MS = 86_400_000;
const TOMBSTONE_MS = 3_600_000;
const LEVELS: Record<number, string> = { 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' };

const dir = mkdtempSync(join(tmpdir(), 'oncely-sqlite-durability-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

interface Recorder {
  readonly db: SqliteDatabase;
  /** What happened since the last `take()`: writes and transaction ends with their level, and the pragmas sent. */
  take(): string[];
  /** The level SQLite reports now. */
  level(): string;
  /** Makes the next `count` sends of PRAGMA synchronous = FULL throw (the restore that fails). */
  failFull(count: number): void;
}

function recorder(inner: SqliteDatabase): Recorder {
  let events: string[] = [];
  let failures = 0;
  const level = (): string => LEVELS[inner.pragma('synchronous', { simple: true }) as number] ?? '?';
  const note = (what: string): void => void events.push(`${what} @${level()}${inner.inTransaction ? ' in tx' : ''}`);
  const db: SqliteDatabase = {
    prepare(source) {
      const statement = inner.prepare(source);
      const write = /^\s*(INSERT(?: OR REPLACE)? INTO|UPDATE|DELETE FROM)\s+(\w+)/i.exec(source);
      return {
        run: (...params) => {
          if (write) note(`${write[1]!.split(' ')[0]!.toLowerCase()} ${write[2]}`);
          return statement.run(...params);
        },
        get: (...params) => statement.get(...params),
        all: (...params) => statement.all(...params),
      };
    },
    exec(source) {
      if (/^PRAGMA synchronous/i.test(source)) {
        if (/= FULL$/.test(source) && failures > 0) {
          failures--;
          events.push(`${source} (failed)`);
          throw new Error('forced: PRAGMA synchronous = FULL failed');
        }
        events.push(source);
      } else if (/^(BEGIN|COMMIT|ROLLBACK)/.test(source)) {
        note(source);
      }
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
    level,
    failFull: (count) => void (failures = count),
  };
}

async function setUp(file = join(dir, `d-${++n}.db`)) {
  const rec = recorder(openSqliteDatabase(file));
  const store = createSqliteStore({ database: rec.db });
  await store.read((tx) => tx.exec('CREATE TABLE IF NOT EXISTS effects (id TEXT NOT NULL)'));
  const clock = new VirtualClock({ startAt: START_AT });
  const ledger = createLedger({ store, clock, leaseMs: LEASE_MS, retentionMs: RETENTION_MS, tombstoneMs: TOMBSTONE_MS });
  const effect = (id: string, status = 201) => async (tx: SqliteTx) => {
    tx.run('INSERT INTO effects (id) VALUES (?)', id);
    return jsonReceipt(status, { id });
  };
  rec.take();
  return { rec, store, clock, ledger, effect, close: async () => (await store.close(), rec.db.close()) };
}

const req = (key: string) => ({ scope: 'alice', key, fingerprint: 'fp' });

/** The effect + receipt transaction of one keyed request, committed at FULL. */
const EFFECT_AND_RECEIPT = ['BEGIN IMMEDIATE @FULL', 'insert effects @FULL in tx', 'update oncely_ledger @FULL in tx', 'COMMIT @FULL in tx'];

describe('SQLite store durability: effect + receipt at FULL, bookkeeping at NORMAL', () => {
  it('a keyed request: the claim commits at NORMAL, the effect and receipt at FULL, and FULL is back after', async () => {
    const { rec, ledger, effect, close } = await setUp();
    assert.equal((await ledger.execute(req('k1'), effect('e1'))).kind, 'executed');
    assert.deepEqual(rec.take(), [
      'PRAGMA synchronous = NORMAL',
      'insert oncely_ledger @NORMAL',
      'PRAGMA synchronous = FULL',
      ...EFFECT_AND_RECEIPT,
    ]);
    assert.equal(rec.level(), 'FULL', 'the connection stays at FULL between calls');
    assert.equal((await ledger.execute(req('k1'), effect('e1'))).kind, 'replayed');
    assert.deepEqual(rec.take(), [], 'a replay writes nothing');
    await close();
  });

  it('a takeover after the lease commits its swap at NORMAL, then the effect and receipt at FULL', async () => {
    const { rec, store, clock, ledger, effect, close } = await setUp();
    await store.insert(inFlight('alice', 'k-dead', 'dead-token', START_AT, 'fp'));
    await clock.advance(LEASE_MS);
    rec.take();
    assert.equal((await ledger.execute(req('k-dead'), effect('late'))).kind, 'executed');
    assert.deepEqual(rec.take(), ['PRAGMA synchronous = NORMAL', 'update oncely_ledger @NORMAL', 'PRAGMA synchronous = FULL', ...EFFECT_AND_RECEIPT]);
    await close();
  });

  it('a release after a 5xx or a thrown effect commits at NORMAL; nothing of the effect commits', async () => {
    const { rec, ledger, effect, close } = await setUp();
    const released = ['PRAGMA synchronous = NORMAL', 'delete oncely_ledger @NORMAL', 'PRAGMA synchronous = FULL'];
    const claimed = ['PRAGMA synchronous = NORMAL', 'insert oncely_ledger @NORMAL', 'PRAGMA synchronous = FULL'];
    assert.equal((await ledger.execute(req('k-5xx'), effect('e5', 503))).kind, 'not_stored');
    assert.deepEqual(rec.take(), [...claimed, 'BEGIN IMMEDIATE @FULL', 'insert effects @FULL in tx', 'ROLLBACK @FULL in tx', ...released]);
    const boom = new Error('handler failed');
    await assert.rejects(ledger.execute(req('k-throw'), async () => { throw boom; }), (e) => e === boom);
    assert.deepEqual(rec.take(), [...claimed, 'BEGIN IMMEDIATE @FULL', 'ROLLBACK @FULL in tx', ...released]);
    await close();
  });

  it('purge on access (tombstone, then delete) commits at NORMAL', async () => {
    const { rec, clock, ledger, effect, close } = await setUp();
    await ledger.execute(req('k-old'), effect('old'));
    await clock.advance(RETENTION_MS);
    rec.take();
    assert.equal((await ledger.lookup('alice', 'k-old')).kind, 'expired');
    // The receipt's row leaves the live table and its tombstone comes, in one transaction.
    assert.deepEqual(rec.take(), [
      'PRAGMA synchronous = NORMAL',
      'BEGIN IMMEDIATE @NORMAL',
      'delete oncely_ledger @NORMAL in tx',
      'insert oncely_ledger_tombstones @NORMAL in tx',
      'COMMIT @NORMAL in tx',
      'PRAGMA synchronous = FULL',
    ]);
    await clock.advance(TOMBSTONE_MS);
    assert.equal((await ledger.lookup('alice', 'k-old')).kind, 'never_seen');
    assert.deepEqual(rec.take(), ['PRAGMA synchronous = NORMAL', 'delete oncely_ledger_tombstones @NORMAL', 'PRAGMA synchronous = FULL']);
    await close();
  });

  it('an unkeyed transaction and writes through read() commit at FULL; a sweep step is bookkeeping, at NORMAL', async () => {
    const { rec, store, clock, ledger, effect, close } = await setUp();
    await store.transaction(async (tx) => void tx.run('INSERT INTO effects (id) VALUES (?)', 'unkeyed'));
    await store.read((tx) => void tx.run('INSERT INTO effects (id) VALUES (?)', 'setup'));
    assert.deepEqual(rec.take(), ['BEGIN IMMEDIATE @FULL', 'insert effects @FULL in tx', 'COMMIT @FULL in tx', 'insert effects @FULL']);
    await ledger.execute(req('k-sweep'), effect('s'));
    await clock.advance(RETENTION_MS);
    rec.take();
    assert.deepEqual(await ledger.purgeExpired(), { tombstoned: 1, deleted: 0 });
    assert.deepEqual(rec.take(), [
      'PRAGMA synchronous = NORMAL',
      'BEGIN IMMEDIATE @NORMAL',
      'insert oncely_ledger_tombstones @NORMAL in tx',
      'delete oncely_ledger @NORMAL in tx',
      'delete oncely_ledger_tombstones @NORMAL in tx',
      'COMMIT @NORMAL in tx',
      'PRAGMA synchronous = FULL',
    ]);
    await close();
  });

  it('under a concurrent mixed load, every COMMIT is at FULL and every ledger write outside a transaction at NORMAL', async () => {
    const { rec, ledger, effect, close } = await setUp();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => {
        const key = `k-${i % 7}`;
        if (i % 5 === 3) return ledger.execute(req(key), effect(key, 503));
        if (i % 11 === 4) return ledger.execute(req(key), async () => { throw new Error('boom'); });
        return ledger.execute(req(key), effect(key));
      }),
    );
    assert.ok(outcomes.some((o) => o.status === 'fulfilled' && o.value.kind === 'executed'));
    const events = rec.take();
    const commits = events.filter((e) => e.startsWith('COMMIT'));
    const bookkeeping = events.filter((e) => / oncely_ledger /.test(e) && !e.endsWith('in tx'));
    assert.ok(commits.length > 0 && bookkeeping.length > commits.length, events.join('\n'));
    assert.deepEqual(commits.filter((e) => e !== 'COMMIT @FULL in tx'), []);
    assert.deepEqual(bookkeeping.filter((e) => !e.endsWith('@NORMAL')), []);
    assert.deepEqual(events.filter((e) => e.startsWith('BEGIN') && e !== 'BEGIN IMMEDIATE @FULL'), []);
    assert.equal(rec.level(), 'FULL');
    await close();
  });

  it('if restoring FULL fails, the next durable write sends it again before BEGIN, or runs nothing', async () => {
    const { rec, store, ledger, close } = await setUp();
    rec.failFull(1);
    assert.equal(await store.insert(inFlight('alice', 'k-a', 't-a', START_AT, 'fp')), true, 'the claim itself committed');
    assert.equal(rec.level(), 'NORMAL');
    await store.transaction(async (tx) => void tx.run('INSERT INTO effects (id) VALUES (?)', 'after'));
    assert.deepEqual(rec.take(), [
      'PRAGMA synchronous = NORMAL',
      'insert oncely_ledger @NORMAL',
      'PRAGMA synchronous = FULL (failed)',
      'PRAGMA synchronous = FULL',
      'BEGIN IMMEDIATE @FULL',
      'insert effects @FULL in tx',
      'COMMIT @FULL in tx',
    ]);

    rec.failFull(2); // the restore after the claim, and the retry before the transaction
    let ran = false;
    const result = await ledger.execute(req('k-c'), async () => ((ran = true), jsonReceipt(201, {})));
    assert.equal(result.kind === 'unavailable' && result.stage, 'transaction');
    assert.equal(ran, false, 'the effect never runs while the connection may be at NORMAL');
    assert.deepEqual(rec.take(), [
      'PRAGMA synchronous = NORMAL',
      'insert oncely_ledger @NORMAL',
      'PRAGMA synchronous = FULL (failed)',
      'PRAGMA synchronous = FULL (failed)', // no BEGIN: the transaction refused to start
      'PRAGMA synchronous = NORMAL',
      'delete oncely_ledger @NORMAL', // the ledger released the key
      'PRAGMA synchronous = FULL',
    ]);
    assert.equal(rec.level(), 'FULL');
    await close();
  });

  it('without WAL (":memory:") nothing is relaxed: the claim commits at FULL', async () => {
    const { rec, ledger, effect, close } = await setUp(':memory:');
    assert.equal(rec.db.pragma('journal_mode', { simple: true }), 'memory');
    assert.equal((await ledger.execute(req('k-mem'), effect('m'))).kind, 'executed');
    assert.deepEqual(rec.take(), ['insert oncely_ledger @FULL', ...EFFECT_AND_RECEIPT]);
    await close();
  });
});
