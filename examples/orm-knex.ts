import { createServer } from 'node:http';
import knexFactory from 'knex';
import { createLedger } from 'oncely';
import { createIdempotencyMiddleware, toNodeListener, withIdempotency } from 'oncely/http';
import { createOrmLedgerStore } from 'oncely/orm';
import { knexExecutor } from 'oncely/orm/knex';

// The app's Knex on a SQLite file; the ledger's tables go in the same file.
const knex = knexFactory({
  client: 'better-sqlite3',
  connection: { filename: process.env.DB_FILE ?? 'shop.db' },
  useNullAsDefault: true,
});
if (!(await knex.schema.hasTable('orders')))
  await knex.schema.createTable('orders', (t) => {
    t.text('caller').notNullable();
    t.text('key').notNullable();
    t.text('item').notNullable();
    t.integer('qty').notNullable();
    t.primary(['caller', 'key']);
  });

const ledger = createLedger({ store: createOrmLedgerStore({ executor: knexExecutor(knex) }) });
await ledger.ready();

const idempotency = createIdempotencyMiddleware({ ledger, scopeOf: () => 'default' });
const handler = withIdempotency(idempotency, async (request, context) => {
  if (!context) return new Response('not found', { status: 404 });
  const { item, qty } = (await request.json()) as { item: string; qty: number };
  // context.tx is the Knex.Transaction the receipt is written in.
  await context.tx('orders').insert({ caller: context.scope, key: context.key, item, qty });
  return Response.json({ order: context.key, item, qty }, { status: 201 });
});
const server = createServer(toNodeListener(handler));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => void knex.destroy()));
