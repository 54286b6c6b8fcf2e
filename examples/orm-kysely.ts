import express from 'express';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createLedger } from 'oncely';
import { captureRawBody, idempotency, idempotencyOf } from 'oncely/express';
import { createOrmLedgerStore } from 'oncely/orm';
import { kyselyExecutor } from 'oncely/orm/kysely';

interface Database {
  orders: { caller: string; key: string; item: string; qty: number };
}

// The app's one pool: Kysely's, and through it the ledger's statements too.
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/app',
});
// node-postgres ends the process on an 'error' nobody hears (a connection the server ended).
pool.on('error', () => {});
pool.on('connect', (client) => client.on('error', () => {}));
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
await db.schema
  .createTable('orders')
  .ifNotExists()
  .addColumn('caller', 'text', (c) => c.notNull())
  .addColumn('key', 'text', (c) => c.notNull())
  .addColumn('item', 'text', (c) => c.notNull())
  .addColumn('qty', 'integer', (c) => c.notNull())
  .addPrimaryKeyConstraint('orders_pk', ['caller', 'key'])
  .execute();

const store = createOrmLedgerStore({ executor: kyselyExecutor(db, { dialect: 'postgres' }) });
const ledger = createLedger({ store });
await ledger.ready(); // an unreachable server fails here

const app = express();
app.use(express.json({ verify: captureRawBody }));
app.post('/orders', idempotency({ ledger, scopeOf: () => 'default' }), async (req, res, next) => {
  try {
    const { item, qty } = req.body as { item: string; qty: number };
    // tx is Kysely's Transaction<Database>: the order commits with the receipt, or neither.
    const { tx, scope, key } = idempotencyOf(req, ledger)!;
    await tx.insertInto('orders').values({ caller: scope, key, item, qty }).execute();
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
process.on('SIGTERM', () => server.close(() => void db.destroy()));
