// One life of a bench/steps-chaos checkout server: the three-step checkout behind oncely's
// ledger on the shared PostgreSQL schema. Argument: ChaosServerConfig as JSON. Prints
// "listening" when it serves; at its kill point it prints the kill line and SIGKILLs itself.
import { createServer } from 'node:http';
import pg from 'pg';
import { createJournal, createLedger } from 'oncely';
import { idempotentHandler, idempotencyOf } from 'oncely/fetch';
import { toNodeListener } from 'oncely/http';
import {
  createPostgresJournalStore,
  createPostgresStore,
  createSqlStepStore,
  type PgTx,
} from 'oncely/stores/postgres';
import {
  killLine,
  ORDERS_TABLE,
  STEPS_TABLE,
  type ChaosServerConfig,
  type KillPoint,
} from './steps-chaos-protocol.js';

const config = JSON.parse(process.argv[2] ?? '') as ChaosServerConfig;
const pool = new pg.Pool({ connectionString: config.pgUrl, max: 8 });
const store = createPostgresStore({ pool, schema: config.schema });
const steps = createSqlStepStore(store, { table: `${config.schema}.${STEPS_TABLE}` });
const journalStore = createPostgresJournalStore({ pool, schema: config.schema });
const journal = createJournal({ store: journalStore });
await Promise.all([store.ready(), steps.ready(), journalStore.ready()]);
const ledger = createLedger({ store, steps, leaseMs: config.leaseMs });

let passes = 0;
/** The fault hook: a step boundary passed; SIGKILL here when this life is to die here. */
function boundary(point: KillPoint): void {
  const kill = config.kill;
  if (kill === null || kill.kind !== point.kind || kill.step !== point.step) return;
  if (++passes < kill.after) return;
  process.stdout.write(`${killLine(point)}\n`);
  process.kill(process.pid, 'SIGKILL');
}

async function pay(request: string, key: string): Promise<string> {
  const response = await fetch(`${config.paymentUrl}/charges`, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'x-request': request },
    signal: AbortSignal.timeout(config.paymentTimeoutMs),
  });
  if (!response.ok) throw new Error(`the payment service answered ${response.status}`);
  return ((await response.json()) as { id: string }).id;
}

const orders = `"${config.schema}".${ORDERS_TABLE}`;
const checkout = async (request: Request): Promise<Response> => {
  const context = idempotencyOf<PgTx>(request)!;
  const { id } = (await request.json()) as { id: string };
  const charge = config.broken
    ? await pay(id, crypto.randomUUID())
    : await context.step('charge', async ({ key }) => {
        const charged = await pay(id, key);
        boundary({ kind: 'before-commit', step: 'charge' });
        return charged;
      });
  boundary({ kind: 'after-commit', step: 'charge' });
  const order = await context.step('order', async ({ sql }) => {
    await sql.run(`INSERT INTO ${orders} (request, charge, server) VALUES ($1, $2, $3)`, [
      id,
      charge,
      config.name,
    ]);
    boundary({ kind: 'before-commit', step: 'order' });
    return `order-${id}`;
  });
  boundary({ kind: 'after-commit', step: 'order' });
  await context.step('email', async ({ sql }) => {
    await journal.recordWithin(sql, {
      key: `email:${id}`,
      target: 'http://127.0.0.1:9/mail/confirmation',
      body: JSON.stringify({ id, charge, order }),
    });
    boundary({ kind: 'before-commit', step: 'email' });
  });
  boundary({ kind: 'after-commit', step: 'email' });
  boundary({ kind: 'before-receipt', step: null });
  return Response.json({ id, charge, order }, { status: 201 });
};

const handler = idempotentHandler({ ledger, scopeOf: () => 'shop' }, checkout);
const server = createServer(toNodeListener(handler, { onError: () => undefined }));
server.listen(config.port, '127.0.0.1', () => process.stdout.write('listening\n'));
