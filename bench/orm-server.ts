/**
 * The server of bench/orm, in a child process of its own (its CPU time is its own): one ORM on
 * one database, three node:http routes that each insert an order, with a new key per request.
 *   /bare  no oncely: the order through the ORM's base client, one INSERT committed by itself;
 *   /tx    no oncely: the order in a transaction of the ORM's own (BEGIN, INSERT, COMMIT), the
 *          shape the guarded route's transaction has, without the claim and the receipt;
 *   /claimed   oncely/node on createOrmLedgerStore: the key claimed (committed alone), then the
 *          order through the ORM's transaction object, committed with the receipt;
 *   /deferred  the same route with `writes: 'deferred'`: no claim, the order through the ORM's
 *          transaction object, the key's row the transaction's last statement, one commit;
 *   /sql   oncely/node on the built-in store (createPostgresStore, createSqliteStore): the order
 *          through `context.sql`, committed with the receipt.
 * Every commit is durable (PostgreSQL synchronous_commit on; SQLite WAL with synchronous FULL).
 * Arguments: a JSON BenchServerSetup. It answers the parent's 'cpu' with process.cpuUsage() and
 * stops on 'exit'.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createLedger, type LedgerStore } from 'oncely';
import { idempotencyOf, idempotentListener } from 'oncely/node';
import { createOrmLedgerStore } from 'oncely/orm';
import { createPostgresStore } from 'oncely/stores/postgres';
import { createSqliteStore } from 'oncely/stores/sqlite';
import { ORDERS_DDL, openOrmApp, type Order } from './orm-apps.js';
import { openSqlite, schemaPool, type Orm, type OrmTarget } from './orm-clients.js';

export interface BenchServerSetup {
  readonly orm: Orm;
  readonly target: OrmTarget;
  /** The SQLite file of the built-in store's route (its own file, its own writer). */
  readonly sqlFile?: string;
  readonly poolSize: number;
}

const setup = JSON.parse(process.argv[2]!) as BenchServerSetup;
const { target, poolSize } = setup;
const app = await openOrmApp(setup.orm, target, poolSize);

/** The built-in store of the same database, at the same durability, with its own tables. */
async function builtInStore(): Promise<LedgerStore<unknown>> {
  if (target.db === 'postgres') {
    const pool = await schemaPool(target.url, target.schema, poolSize);
    await pool.query(ORDERS_DDL);
    return createPostgresStore({ pool, schema: target.schema, table: 'sql_ledger' });
  }
  const database = await openSqlite(setup.sqlFile!, { durable: true });
  database.exec(ORDERS_DDL);
  return createSqliteStore({ database, table: 'sql_ledger' });
}

const ormLedger = createLedger({
  store: createOrmLedgerStore({
    executor: app.executor,
    ...(target.db === 'postgres' ? { schema: target.schema } : {}),
  }),
});
const sqlLedger = createLedger({ store: await builtInStore() });
await ormLedger.ready();
await sqlLedger.ready();

const decoder = new TextDecoder();
const orderOf = (key: string, bytes: Uint8Array): Order => {
  const { item, qty } = JSON.parse(decoder.decode(bytes)) as { item: string; qty: number };
  return { caller: 'bench', key, item, qty };
};
const answer = (res: ServerResponse, order: Order): void =>
  void res
    .writeHead(201, { 'content-type': 'application/json' })
    .end(JSON.stringify({ order: order.key }));
const failed = (res: ServerResponse, error: unknown): void => {
  console.error(error);
  res.writeHead(500).end();
};

/** A route without oncely: the body read, the order written by `write`, the answer. */
const unguarded =
  (write: (order: Order) => Promise<void>) =>
  async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const order = orderOf(String(req.headers['idempotency-key']), Buffer.concat(chunks));
    try {
      await write(order);
      answer(res, order);
    } catch (error) {
      failed(res, error);
    }
  };
const bare = unguarded((order) => app.insert(order));
// The ORM's own callback-shaped transaction, as the guarded route's.
const inTransaction = unguarded((order) =>
  app.executor.transaction((tx) => app.insertIn(tx, order)),
);

const options = { scopeOf: () => 'bench', onError: (error: unknown) => console.error(error) };
const throughOrm = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const context = idempotencyOf(req)!;
  const order = orderOf(context.key, context.body);
  await app.insertIn(context.tx, order);
  answer(res, order);
};
const claimed = idempotentListener({ ...options, ledger: ormLedger }, throughOrm);
const deferred = idempotentListener(
  { ...options, ledger: ormLedger, writes: 'deferred' },
  throughOrm,
);
const sql = idempotentListener({ ...options, ledger: sqlLedger }, async (req, res) => {
  const context = idempotencyOf(req)!;
  const order = orderOf(context.key, context.body);
  await context.sql.run('INSERT INTO orders (caller, key, item, qty) VALUES ($1, $2, $3, $4)', [
    order.caller,
    order.key,
    order.item,
    order.qty,
  ]);
  answer(res, order);
});

const server = createServer((req, res) => {
  if (req.url === '/claimed') void claimed(req, res);
  else if (req.url === '/deferred') void deferred(req, res);
  else if (req.url === '/sql') void sql(req, res);
  else if (req.url === '/tx') void inTransaction(req, res);
  else void bare(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
});
process.on('message', (message) => {
  if (message === 'cpu') process.send!({ cpu: process.cpuUsage() });
  if (message === 'exit')
    server.close(async () => {
      await ormLedger.store.close();
      await sqlLedger.store.close();
      await app.close();
      process.exit(0);
    });
});
