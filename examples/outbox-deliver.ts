import { createJournal, createOutboxWorker } from 'oncely';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';

// A message bus stands in for HTTP. It keeps one message per id, so a redelivery under the same
// key (after a crash between the publish and its settlement) changes nothing downstream.
const bus = new Map<string, string>();

const file = process.env.DB_FILE ?? 'bus.db';
const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
const journal = createJournal({ store });
await journal.record({
  key: 'order-7', // the message id on every attempt, across restarts
  target: 'https://bus.example/orders', // recorded and shown; the hook decides where it goes
  body: JSON.stringify({ orderId: 'order-7', item: 'tea' }),
  headers: { 'content-type': 'application/json' },
});

const worker = createOutboxWorker({
  store,
  deliver: async ({ key, body }) => {
    if (!bus.has(key)) bus.set(key, new TextDecoder().decode(body ?? new Uint8Array()));
    return { status: 202 }; // read as an HTTP answer: 2xx delivered; a throw is retried
  },
});
const counts = await worker.resume();
const report = await journal.report('order-7');
console.log(report?.intent.state, report?.intent.outcome?.status, `delivered ${counts.delivered}`);
for (const [id, message] of bus) console.log(`bus: ${id} ${message}`);
await store.close();
