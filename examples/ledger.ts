import { createServer } from 'node:http';
import { createLedger } from 'oncely';
import { createIdempotencyMiddleware, toNodeListener, withIdempotency } from 'oncely/http';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';

// Your own table, beside the ledger's (which the store creates). Keys are scoped per caller, so
// the effect is keyed by (caller, key) too: two callers may well pick the same key.
const database = openSqliteDatabase(process.env.DB_FILE ?? 'ledger.db');
database.exec(`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (caller, key))`);

// Your authentication goes here: a bearer token's owner, a session's account.
const callers = new Map([
  ['Bearer alice-secret', 'alice'],
  ['Bearer bob-secret', 'bob'],
]);

const ledger = createLedger({ store: createSqliteStore({ database }) }); // lease 2 s renewed every 1 s, retention 24 h
const idempotency = createIdempotencyMiddleware({
  ledger,
  scopeOf: (request) => callers.get(request.headers.get('authorization') ?? ''), // undefined: 401
  // A handler's exception is a 500 to the client; this is where you see it (default: stderr).
  onError: (error, request) => console.error(`${request.method} ${request.url} failed:`, error),
});
const handler = withIdempotency(idempotency, async (request, context) => {
  if (!context) return new Response('not found', { status: 404 }); // GET etc. bypass the ledger
  // context.tx is the ledger's transaction: the effect and the receipt commit together, or not at all.
  // On SQLite it takes the writer at begin(), not before: await slow calls before it, not after.
  const body = await request.text();
  await context.tx.begin();
  context.tx.run(
    'INSERT INTO orders (caller, key, body) VALUES (?, ?, ?)',
    context.scope,
    context.key,
    body,
  );
  return Response.json({ caller: context.scope, key: context.key }, { status: 201 });
});
const server = createServer(toNodeListener(handler));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
