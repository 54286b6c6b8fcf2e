import { spawn } from 'node:child_process';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createJournal } from '#oncely/journal/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import type { SqliteJournalTx } from '#oncely/stores/journal/sqlite/sqlite-journal-store.js';
import { runJournalConformance, type JournalFixture } from './journal-conformance.js';
import { runEndpointConformance } from './endpoint-conformance.js';
import { turnsUntil } from '../support/turns-until.js';
import { tempDir } from '../support/temp-dir.js';
import { CLI } from '../support/repo-path.js';

const dir = tempDir('oncely-journal-');
let n = 0;

const openSqlite = async (): Promise<JournalFixture<SqliteJournalTx>> => {
  // The app's own connection on the same file: its transaction is where recordWithin writes.
  const file = join(dir, `journal-${++n}.db`);
  const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
  const app = openSqliteDatabase(file);
  app.pragma('busy_timeout = 5000');
  app.exec('CREATE TABLE IF NOT EXISTS orders (id TEXT NOT NULL)');
  return {
    store,
    appTransaction: async (fn) => {
      app.exec('BEGIN IMMEDIATE');
      try {
        await fn(app);
        app.exec('COMMIT');
      } catch (error) {
        app.exec('ROLLBACK');
        throw error;
      }
    },
    writeOrder: async (tx, id) =>
      void (tx as typeof app).prepare('INSERT INTO orders (id) VALUES (?)').run(id),
    countOrders: async () =>
      (app.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n,
    close: async () => {
      await store.close();
      app.close();
    },
  };
};
runJournalConformance<SqliteJournalTx>('sqlite', openSqlite);
runEndpointConformance<SqliteJournalTx>('sqlite', openSqlite);

describe('SQLite journal store', () => {
  it("waits for another process's write lock in the event loop, not in SQLite's busy handler", async () => {
    const file = join(dir, `journal-${++n}.db`);
    const clock = new VirtualClock({ autoAdvance: false });
    const store = createSqliteJournalStore({
      database: () => openSqliteDatabase(file),
      clock,
      busyTimeoutMs: 50,
    });
    const journal = createJournal({ store });
    await store.ready();
    const other = openSqliteDatabase(file); // another process's connection on the same file
    other.exec('BEGIN IMMEDIATE');
    let recorded = false;
    const record = journal
      .record({ key: 'k1', target: 'https://example.test/hook', body: '{}' })
      .then(() => (recorded = true));
    // Waiting inside SQLite would freeze this process right here for the busy timeout; instead
    // the write sleeps on the store's clock.
    await turnsUntil(() => clock.pendingCount === 1);
    await clock.advance(10);
    assert.equal(recorded, false, 'still locked: still waiting');
    other.exec('COMMIT');
    await clock.advance(1);
    await record;
    assert.equal((await journal.get('k1'))?.key, 'k1');

    other.exec('BEGIN IMMEDIATE');
    const refused = journal
      .record({ key: 'k2', target: 'https://example.test/hook', body: '{}' })
      .then(
        () => 'recorded',
        (error: { code?: string }) => error.code,
      );
    await turnsUntil(() => clock.pendingCount === 1);
    await clock.advance(50);
    assert.equal(await refused, 'SQLITE_BUSY', 'past busyTimeoutMs: SQLite’s own busy error');
    other.exec('COMMIT');
    assert.equal(await journal.get('k2'), undefined, 'nothing half written');
    other.close();
    await store.close();
  });
});

/** `oncely outbox add` in a process of its own: another process records an intent. */
function recordElsewhere(file: string, key: string): Promise<number | null> {
  const args = [CLI, 'outbox', 'add', 'https://example.test/h', '-d', '{}', '--journal', file];
  args.push('--key', key);
  const child = spawn(process.execPath, args, { stdio: 'ignore' });
  return new Promise((resolve) => child.on('exit', resolve));
}

/** A store's watch: `woken` resolves at its first wake. */
async function firstWake(store: ReturnType<typeof createSqliteJournalStore>) {
  let woken!: () => void;
  const heard = new Promise<void>((resolve) => (woken = resolve));
  const stop = await store.watch(() => woken());
  return { heard, stop };
}

describe('SQLite journal store, wake across processes', () => {
  it("a watching worker's store hears an intent another process recorded", {
    timeout: 30_000,
  }, async () => {
    const file = join(dir, `journal-${++n}.db`);
    const worker = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    await worker.ready();
    const wake = await firstWake(worker);
    assert.equal(await recordElsewhere(file, 'k1'), 0);
    await wake.heard; // nothing in this process was told: the test times out unless it is heard
    wake.stop();
    await worker.close();
  });

  it('with its clock standing still, the watch on the WAL file hears the recorder at once', {
    timeout: 30_000,
  }, async () => {
    const file = join(dir, `journal-${++n}.db`);
    // Its looks are background sleeps on a clock nobody moves: only the file's watch can wake it.
    const clock = new VirtualClock({ autoAdvance: false });
    const worker = createSqliteJournalStore({ database: () => openSqliteDatabase(file), clock });
    await worker.ready();
    const wake = await firstWake(worker);
    assert.equal(await recordElsewhere(file, 'k1'), 0);
    await wake.heard; // the recorder touched the WAL after its commit
    assert.equal(clock.now(), 0);
    wake.stop();
    await worker.close();
  });

  it("an intent recorded in the app's own transaction on another connection is heard", {
    timeout: 30_000,
  }, async () => {
    const file = join(dir, `journal-${++n}.db`);
    const worker = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    await worker.ready();
    const app = openSqliteDatabase(file);
    app.pragma('busy_timeout = 5000');
    // A store of the app's that never commits by itself: the app's COMMIT tells no one.
    const appStore = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    await appStore.ready();
    const wake = await firstWake(worker);
    app.exec('BEGIN IMMEDIATE');
    await createJournal({ store: appStore }).recordWithin(app, {
      key: 'in-tx',
      target: 'https://example.test/h',
    });
    app.exec('COMMIT');
    await wake.heard; // its write to the WAL, then the looks at data_version 1 ms apart
    wake.stop();
    app.close();
    await appStore.close();
    await worker.close();
  });
});

describe('SQLite journal store, endpoints', () => {
  it('a journal made before endpoints gains the column and the table on ready()', async () => {
    const file = join(dir, `journal-${++n}.db`);
    const old = openSqliteDatabase(file);
    // The intents table as it was: every column but `endpoint`.
    const before = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    await before.ready();
    await before.close();
    old.exec(
      'ALTER TABLE oncely_intents DROP COLUMN endpoint; DROP TABLE oncely_intents_endpoints',
    );
    old.exec(
      `INSERT INTO oncely_intents (key, target, method, headers, secret_headers, body, policy, created_by, created_at, state, attempt_count, next_attempt_at, previous_delay_ms, saw_unknown, open_attempt) VALUES ('old', 'http://x.test/', 'POST', '{}', '[]', x'', '{}', 'oncely', 1, 'pending', 0, 1, 0, 0, 0)`,
    );
    old.close();
    const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    const journal = createJournal({ store });
    await journal.endpoints.add({ id: 'a', url: 'http://x.test/a' });
    await journal.record({ key: 'new', endpoint: 'a', body: '{}' });
    assert.equal((await journal.get('old'))?.endpoint, null);
    assert.equal((await journal.get('new'))?.endpoint, 'a');
    await store.close();
  });
});
