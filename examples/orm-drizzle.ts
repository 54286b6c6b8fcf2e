import express from 'express';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { createJournal, createLedger } from 'oncely';
import { captureRawBody, idempotency, idempotencyOf } from 'oncely/express';
import { createOrmLedgerStore } from 'oncely/orm';
import { drizzlePgExecutor } from 'oncely/orm/drizzle';
import { createPostgresJournalStore } from 'oncely/stores/postgres';

const orders = pgTable(
  'orders',
  {
    caller: text().notNull(),
    key: text().notNull(),
    item: text().notNull(),
    qty: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] })],
);

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/app',
});
pool.on('error', () => {});
pool.on('connect', (client) => client.on('error', () => {}));
const db = drizzle(pool);
await db.execute(sql`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL,
  PRIMARY KEY (caller, key))`);

const ledger = createLedger({ store: createOrmLedgerStore({ executor: drizzlePgExecutor(db) }) });
// The webhooks the orders owe: an outbox on the same database (and pool), sent by a worker.
const journal = createJournal({ store: createPostgresJournalStore({ pool }) });
await ledger.ready();
await journal.store.ready();

const app = express();
app.use(express.json({ verify: captureRawBody }));
app.post('/orders', idempotency({ ledger, scopeOf: () => 'default' }), async (req, res, next) => {
  try {
    const { item, qty } = req.body as { item: string; qty: number };
    const { tx, scope, key } = idempotencyOf(req, ledger)!; // Drizzle's tx
    await tx.insert(orders).values({ caller: scope, key, item, qty });
    // The order, the webhook it owes and the receipt: one commit.
    await journal.recordWithin(tx, {
      key: `order-placed-${key}`,
      target: 'https://hooks.example.com/orders',
      body: JSON.stringify({ order: key, item, qty }),
    });
    res.status(201).json({ order: key, item, qty });
  } catch (error) {
    next(error);
  }
});
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => void pool.end()));
