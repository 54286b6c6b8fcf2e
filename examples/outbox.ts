import { createJournal, createOutboxWorker } from 'oncely';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';

// The hook receiver of `npx oncely serve` (URL and TOKEN as it prints them) stands in for any endpoint.
const url = `${process.env.URL ?? 'http://127.0.0.1:8787'}/hooks/order-saved`;
const file = process.env.DB_FILE ?? 'shop.db';
const app = openSqliteDatabase(file); // the application's own connection
const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
const journal = createJournal({ store });
await store.ready(); // the journal's tables exist before a transaction uses them
app.pragma('busy_timeout = 5000');
app.exec('CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, item TEXT NOT NULL)');

// "Order saved" and "notification owed" commit together, or neither does.
const orderId = `order-${Date.now()}`;
app.exec('BEGIN IMMEDIATE');
try {
  app.prepare('INSERT INTO orders (id, item) VALUES (?, ?)').run(orderId, 'tea');
  await journal.recordWithin(app, {
    key: orderId, // the same key on every attempt, across restarts
    target: url,
    body: JSON.stringify({ orderId, item: 'tea' }),
    headers: { 'content-type': 'application/json' },
    secretHeaders: ['authorization'], // named here, re-supplied at send time, never written
    maxAttempts: 5,
    deadlineAt: Date.now() + 60_000,
  });
  app.exec('COMMIT');
} catch (error) {
  app.exec('ROLLBACK');
  throw error;
}

// Delivers every unfinished intent: here, or after a crash with `oncely outbox run --journal shop.db`.
const worker = createOutboxWorker({
  store,
  secrets: { authorization: `Bearer ${process.env.TOKEN}` },
});
const counts = await worker.resume();
const report = await journal.report(orderId);
console.log(
  report?.intent.state,
  report?.intent.outcome?.status,
  `${report?.attempts.length} attempt(s)`,
  `delivered ${counts.delivered}`,
);
await store.close();
app.close();
