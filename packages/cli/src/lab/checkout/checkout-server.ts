// One life of the lab's checkout server: a child process that `oncely lab checkout` starts,
// SIGKILLs at a kill point and starts again on the same port and SQLite file. Argument: the
// ServerLife as JSON. Prints "listening" once it serves, and "dying <order> <point>" where it is
// to die, then hangs until the parent kills it.
import { createServer } from 'node:http';
import { createJournal, createLedger, VirtualClock } from 'oncely';
import { idempotentHandler } from 'oncely/fetch';
import { toNodeListener } from 'oncely/http';
import {
  createSqliteJournalStore,
  createSqliteStore,
  createSqlStepStore,
  openSqliteDatabase,
  type SqliteTx,
} from 'oncely/stores/sqlite';
import { checkoutRoute, type CheckoutWorld } from './checkout-route.js';
import { ORDERS_TABLE, type ServerLife } from './server-lives.js';

const life = JSON.parse(process.argv[2] ?? '') as ServerLife;
const database = () => openSqliteDatabase(life.file);
const store = createSqliteStore({ database });
const steps = createSqlStepStore(store);
const journalStore = createSqliteJournalStore({ database });
const journal = createJournal({ store: journalStore });
// Tables first: inside a request, a second connection setting up its table would wait for the
// lock the request's own transaction holds.
await Promise.all([steps.ready(), journalStore.ready()]);
await store.write((tx) =>
  tx.exec(`CREATE TABLE IF NOT EXISTS ${ORDERS_TABLE} (id TEXT NOT NULL, charge TEXT NOT NULL)`),
);

const world: CheckoutWorld<SqliteTx> = {
  async charge(order, amountCents, key) {
    const response = await fetch(`${life.paymentUrl}/charges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ order, amountCents }),
    });
    return ((await response.json()) as { id: string }).id;
  },
  async saveOrder({ sql }, order, charge) {
    await sql.run(`INSERT INTO ${ORDERS_TABLE} (id, charge) VALUES ($1, $2)`, [order, charge]);
  },
  async queueEmail({ sql }, order, charge) {
    await journal.recordWithin(sql, {
      key: `email:${order}`,
      target: 'http://127.0.0.1:9/mail/confirmation',
      body: JSON.stringify({ order, charge }),
    });
  },
  async reach(order, point) {
    if (life.dieAt?.order !== order || life.dieAt.point !== point) return;
    process.stdout.write(`dying ${order} ${point}\n`);
    // Hangs: the listening server keeps the process alive until the parent kills it.
    await new Promise<never>(() => {});
  },
};

const ledger = createLedger({ store, steps, clock: new VirtualClock({ startAt: life.startAt }) });
const handler = idempotentHandler(
  { ledger, scopeOf: () => 'shop' },
  checkoutRoute(life.handler, world),
);
const server = createServer(toNodeListener(handler, { onError: () => undefined }));
server.listen(life.port, '127.0.0.1', () => process.stdout.write('listening\n'));
