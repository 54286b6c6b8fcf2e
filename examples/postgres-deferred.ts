import { createServer } from 'node:http';
import { createLedger } from 'oncely';
import { createIdempotencyMiddleware, toNodeListener, withIdempotency } from 'oncely/http';
import { createPostgresStore, openPostgresPool } from 'oncely/stores/postgres';

const pool = openPostgresPool(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/app');
await pool.query(`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL,
  PRIMARY KEY (caller, key))`);
const ledger = createLedger({ store: createPostgresStore({ pool }) });
await ledger.ready();

// writes: 'deferred': the handler's only trace is the writes it leaves for the commit, so the key
// is not claimed first; the receipt's row and the writes commit in one transaction, and concurrent
// requests share one transaction.
const idempotency = createIdempotencyMiddleware({
  ledger,
  scopeOf: () => 'default', // one tenant
  writes: 'deferred',
});
const handler = withIdempotency(idempotency, async (request, context) => {
  if (!context) return new Response('not found', { status: 404 });
  const { item, qty } = (await request.json()) as { item: string; qty: number };
  // Not run now: at the commit, after this answer is made, with the receipt. Its result is never
  // seen, so the answer cannot depend on it (an awaited context.sql.run() here is refused).
  context.sql.defer('INSERT INTO orders (caller, key, item, qty) VALUES ($1, $2, $3, $4)', [
    context.scope,
    context.key,
    item,
    qty,
  ]);
  return Response.json({ order: context.key, item, qty }, { status: 201 });
});
const server = createServer(toNodeListener(handler));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => server.close(() => void pool.end()));
