import { createJournal, createLedger } from 'oncely';
import { createIdempotencyMiddleware, withIdempotency } from 'oncely/http';
import {
  createSqlStepStore,
  createSqliteJournalStore,
  createSqliteStore,
  openSqliteDatabase,
} from 'oncely/stores/sqlite';

// The ledger, its steps and the outbox, all in one SQLite file.
const file = process.env.DB_FILE ?? 'checkout.db';
const database = openSqliteDatabase(file);
database.exec(`CREATE TABLE IF NOT EXISTS orders (
  caller TEXT NOT NULL, key TEXT NOT NULL, charge TEXT NOT NULL, PRIMARY KEY (caller, key))`);
const store = createSqliteStore({ database });
const ledger = createLedger({ store, steps: createSqlStepStore(store) });
const journalStore = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
const journal = createJournal({ store: journalStore });
// Tables first: a step's transaction must not be the one to wait for the journal's set-up.
await Promise.all([ledger.ready(), journalStore.ready()]);

// A payment API that dedupes by Idempotency-Key, as Stripe's does. It counts the calls it gets.
const charges = new Map<string, string>();
let paymentCalls = 0;
async function charge(idempotencyKey: string, amountCents: number): Promise<string> {
  paymentCalls++;
  if (!charges.has(idempotencyKey)) charges.set(idempotencyKey, `ch_${charges.size + 1}`);
  console.log(`payment API: charged ${amountCents} under ${idempotencyKey.slice(0, 12)}…`);
  return charges.get(idempotencyKey)!;
}

let warehouseUp = false; // down for the first attempt: it fails after the charge

const checkout = withIdempotency(
  createIdempotencyMiddleware({
    ledger,
    scopeOf: () => 'alice', // your authentication here
    onError: (error) => console.log(`the attempt failed: ${(error as Error).message}`),
  }),
  async (request, context) => {
    if (!context) return new Response('not found', { status: 404 });
    const { amountCents } = (await request.json()) as { amountCents: number };
    // 1. The card is charged once: the step's key is the payment API's Idempotency-Key, and
    //    its result is committed before the next step starts.
    const chargeId = await context.step('charge', ({ key }) => charge(key, amountCents));
    // 2. A failure here (a throw, a 5xx, a timeout) leaves the charge recorded.
    await context.step('reserve', () => {
      if (!warehouseUp) throw new Error('the warehouse is unavailable');
      return 'reserved';
    });
    // 3. The email's outbox intent commits with this step's recovery point.
    await context.step('email', ({ sql }) =>
      journal.recordWithin(sql, {
        key: `receipt-email:${context.key}`,
        target: 'https://mail.example/send',
        body: JSON.stringify({ to: context.scope, chargeId }),
      }),
    );
    // After the last step, the route's own writes commit with the receipt.
    await context.sql.run('INSERT INTO orders (caller, key, charge) VALUES ($1, $2, $3)', [
      context.scope,
      context.key,
      chargeId,
    ]);
    return Response.json({ order: context.key, chargeId }, { status: 201 });
  },
);

// The client sends the same request, with the same key, until it gets an answer to keep.
const send = () =>
  checkout(
    new Request('http://shop.example/checkout', {
      method: 'POST',
      headers: { 'idempotency-key': 'order-7', 'content-type': 'application/json' },
      body: JSON.stringify({ amountCents: 1200 }),
    }),
  );
for (let attempt = 1; attempt <= 3; attempt++) {
  const response = await send();
  const replayed = response.headers.get('idempotent-replayed') === 'true' ? ' (replayed)' : '';
  const body = response.status === 201 ? ` ${await response.text()}` : '';
  console.log(`attempt ${attempt}: ${response.status}${replayed}${body}`);
  warehouseUp = true;
}
console.log(`payment API calls: ${paymentCalls}, charges: ${charges.size}`);
await journalStore.close();
await store.close();
