import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import express from 'express';
import pg from 'pg';
import { createJournal, createLedger, type CarriesSqlHandle } from 'oncely';
import { captureRawBody, idempotency, idempotencyOf } from 'oncely/express';
import { createOrmLedgerStore } from 'oncely/orm';
import { prismaExecutor } from 'oncely/orm/prisma';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { PrismaClient } from './generated/client.js';

// PostgreSQL (postgres://…) or a SQLite file (file:shop.db): the client generated for it.
const url = process.env.DATABASE_URL ?? 'file:shop.db';
const dialect = url.startsWith('postgres') ? 'postgres' : 'sqlite';
const prisma = new PrismaClient({
  adapter:
    dialect === 'postgres'
      ? new PrismaPg({ connectionString: url })
      : new PrismaBetterSqlite3({ url }),
});
// Plain SQL: `prisma migrate` needs a schema engine, which this app does without.
await prisma.$executeRawUnsafe(`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL,
  PRIMARY KEY (caller, key))`);

// The receipts go through Prisma: its interactive transaction is the route's.
const ledger = createLedger({
  store: createOrmLedgerStore({ executor: prismaExecutor(prisma, { dialect }) }),
});
// The webhooks the orders owe: an outbox in the same database, sent by its worker
// (docs/outbox.md). Either store takes the route's transaction (CarriesSqlHandle) in
// recordWithin, and writes the intent in it.
const pool = dialect === 'postgres' ? new pg.Pool({ connectionString: url, max: 2 }) : undefined;
const journal = createJournal<CarriesSqlHandle>({
  store: pool
    ? createPostgresJournalStore({ pool })
    : createSqliteJournalStore({ database: openSqliteDatabase(url.slice('file:'.length)) }),
});
await ledger.ready();
await journal.store.ready();

const app = express();
app.use(express.json({ verify: captureRawBody }));
app.post('/orders', idempotency({ ledger, scopeOf: () => 'default' }), async (req, res, next) => {
  try {
    const { item, qty } = req.body as { item: string; qty: number };
    // tx is Prisma's transaction client: the order, the webhook it owes and the receipt
    // commit together, or none of them.
    const { tx, scope, key } = idempotencyOf(req, ledger)!;
    await tx.order.create({ data: { caller: scope, key, item, qty } });
    await journal.recordWithin(tx, {
      key: `order-placed-${key}`,
      target: process.env.WEBHOOK_URL ?? 'https://hooks.example.com/orders',
      body: JSON.stringify({ order: key, item, qty }),
    });
    res.status(201).json({ order: key, item, qty });
  } catch (error) {
    next(error);
  }
});
// The order and the state of the webhook it owes.
app.get('/orders/:key', async (req, res) => {
  const { key } = req.params;
  const order = await prisma.order.findUnique({
    where: { caller_key: { caller: 'default', key } },
  });
  if (order === null) return void res.status(404).json({ error: 'no such order' });
  const webhook = await journal.get(`order-placed-${key}`);
  res.json({ order: key, item: order.item, qty: order.qty, webhook: webhook?.state });
});
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () =>
  server.close(async () => {
    await journal.store.close();
    await prisma.$disconnect();
    await pool?.end();
  }),
);
