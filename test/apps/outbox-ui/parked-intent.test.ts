import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOutboxUiApp } from '#cli/outbox-ui/outbox-ui-server.js';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { tempDir } from '../../support/temp-dir.js';

const TOKEN = 'test-token-0123456789';

// The view listed a parked intent (its endpoint paused) with a next attempt in the year 9999.
test('the view says an intent is parked, with no next instant', async () => {
  const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
  const store = createMemoryJournalStore();
  const journal = createJournal({ store, clock });
  await journal.endpoints.add({ id: 'shop', url: 'http://shop.test/h' });
  await journal.endpoints.pause('shop');
  await journal.record({ key: 'k1', endpoint: 'shop', body: '{}' });
  await journal.record({ key: 'k2', target: 'http://other.test/h', body: '{}' });
  await createOutboxWorker({
    store,
    clock,
    fetch: async () => new Response('', { status: 503 }),
  }).runOnce();
  const app = createOutboxUiApp(journal, TOKEN, tempDir('oncely-parked-view-'));
  const response = await app.fetch(
    new Request('http://127.0.0.1:8790/api/intents', {
      headers: { authorization: `Bearer ${TOKEN}`, host: '127.0.0.1:8790' },
    }),
  );
  const { intents } = (await response.json()) as {
    intents: { key: string; parked: boolean; nextAttemptAt: string | null }[];
  };
  const byKey = Object.fromEntries(intents.map((i) => [i.key, i]));
  assert.deepEqual([byKey['k1']?.parked, byKey['k1']?.nextAttemptAt], [true, null]);
  assert.equal(byKey['k2']?.parked, false);
  // The schedule's first wait, 5 s, lengthened by up to 10 %.
  assert.match(byKey['k2']?.nextAttemptAt ?? '', /^2026-12-01T00:00:05\.\d{3}Z$/);
});
