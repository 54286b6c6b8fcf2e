import express from 'express';
import { createLedger } from 'oncely';
import { captureRawBody, idempotency, idempotencyOf } from 'oncely/express';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';

// The effect's table lives in the ledger's database: the order and its receipt commit together.
const database = openSqliteDatabase(process.env.DB_FILE ?? 'shop.db');
database.exec(`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, item TEXT NOT NULL, qty INTEGER NOT NULL,
  PRIMARY KEY (caller, key))`);
const ledger = createLedger({ store: createSqliteStore({ database }) });

const app = express();
app.use(express.json({ verify: captureRawBody })); // the fingerprint is taken from the exact bytes
app.use((req, _res, next) => {
  // Your authentication (passport, a session): whatever sets req.user.
  const token = req.headers.authorization?.replace(/^Bearer /, '');
  if (token === 'alice-secret') Object.assign(req, { user: { id: 'alice' } });
  next();
});

// The route is an ordinary Express route; idempotency() goes in front of it.
const guard = idempotency({
  ledger,
  scopeOf: (req) => (req as { user?: { id: string } }).user?.id,
});
app.post('/orders', guard, async (req, res, next) => {
  try {
    const { item, qty } = req.body as { item: string; qty: number };
    const { sql, scope, key } = idempotencyOf(req)!; // the ledger's transaction, on either store
    await sql.run('INSERT INTO orders (caller, key, item, qty) VALUES ($1, $2, $3, $4)', [
      scope,
      key,
      item,
      qty,
    ]);
    res.status(201).json({ order: key, item, qty });
  } catch (error) {
    next(error); // a 5xx is not stored: the insert rolls back and a retry runs again
  }
});

await ledger.ready(); // a bad path fails here, not on the first request
const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address)
    console.log(`listening on http://127.0.0.1:${address.port}`);
});
