import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createLedger } from '#oncely/ledger/ledger.js';
import { setUpHookHits } from '#cli/receivers/hook/hook-hits-table.js';
import { createHookService } from '#cli/receivers/hook/hook-service.js';
import { sqliteServiceDatabase } from '#cli/receivers/sql/service-database.js';
import {
  createSqliteJournalStore,
  createSqliteStore,
  openSqliteDatabase,
} from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-hook-notify-');
const post = (key: string, body = '{"run":1}') =>
  new Request('http://hook.test/hooks/run-complete', {
    method: 'POST',
    body,
    headers: { 'Idempotency-Key': key },
  });

test('the hook receiver owes one notification per completed key, recorded with the ack; the outbox worker delivers it', async () => {
  const file = join(dir, 'hook.db');
  const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  const db = sqliteServiceDatabase(store);
  await setUpHookHits(db);
  const journalStore = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
  await journalStore.ready();
  const hook = createHookService({
    ledger: createLedger({ store, clock }),
    db,
    clock,
    script: '503x1,200',
    notifications: { store: journalStore, target: 'http://notify.test/events' },
  });
  try {
    assert.equal((await hook.handle(post('run-1'))).status, 503);
    const journal = createJournal({ store: journalStore, clock });
    assert.equal((await journal.counts()).pending, 0, 'a refusal owes nothing');
    assert.equal((await hook.handle(post('run-1'))).status, 200);
    assert.equal((await hook.handle(post('run-1'))).headers.get('idempotent-replayed'), 'true');
    assert.equal((await hook.handle(post('run-2', '{"run":2}'))).status, 200);
    const owed = await journal.list();
    assert.equal(owed.length, 2, 'one per completed key; the replay owes nothing more');
    const sent: unknown[] = [];
    const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
      sent.push(JSON.parse(new TextDecoder().decode(init?.body as Uint8Array)));
      return new Response(null, { status: 204 });
    }) as typeof globalThis.fetch;
    const counts = await createOutboxWorker({ store: journalStore, clock, fetch }).resume();
    assert.equal(counts.delivered, 2);
    assert.deepEqual(sent.map((e) => (e as { key: string; event: string }).key).sort(), [
      'run-1',
      'run-2',
    ]);
    assert.ok(sent.every((e) => (e as { event: string }).event === 'hook.completed'));
  } finally {
    await journalStore.close();
    await store.close();
  }
});

test('a bad notification target is refused when the receiver is made', async () => {
  const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
  const journalStore = createSqliteJournalStore({ database: () => openSqliteDatabase(':memory:') });
  assert.throws(
    () =>
      createHookService({
        ledger: createLedger({ store }),
        db: sqliteServiceDatabase(store),
        notifications: { store: journalStore, target: 'not a url' },
      }),
    /invalid option target/,
  );
  await store.close();
});
