import { createServer } from 'node:http';
import { createLedger } from 'oncely';
import { createIdempotencyMiddleware, toNodeListener, withIdempotency } from 'oncely/http';
import { createPostgresStore, openPostgresPool } from 'oncely/stores/postgres';

const pool = openPostgresPool(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/app');
// The same DDL and statements as on SQLite: only the store line differs.
await pool.query(`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL,
  PRIMARY KEY (caller, key))`);
const ledger = createLedger({ store: createPostgresStore({ pool }) });
await ledger.ready(); // an unreachable server or a missing database fails here

const idempotency = createIdempotencyMiddleware({ ledger, scopeOf: () => 'default' }); // one tenant
const handler = withIdempotency(idempotency, async (request, context) => {
  if (!context) return new Response('not found', { status: 404 });
  const { item, qty } = (await request.json()) as { item: string; qty: number };
  // On the same client and in the same transaction as the receipt.
  await context.sql.run('INSERT INTO orders (caller, key, item, qty) VALUES ($1, $2, $3, $4)', [
    context.scope,
    context.key,
    item,
    qty,
  ]);
  // tookOver: an earlier worker's lease ran out on this key. Its writes to this database rolled
  // back with it; anything it did elsewhere (an email, a call to another API) may have happened.
  if (context.claim.tookOver) console.warn(`order ${context.key} taken over after a lost lease`);
  return Response.json({ order: context.key, item, qty }, { status: 201 });
});
const server = createServer(toNodeListener(handler));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => void pool.end()));
