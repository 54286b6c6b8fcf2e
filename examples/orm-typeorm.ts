import Fastify from 'fastify';
import { DataSource, EntitySchema } from 'typeorm';
import { createLedger } from 'oncely';
import { fastifyIdempotency, idempotencyOf } from 'oncely/fastify';
import { createOrmLedgerStore } from 'oncely/orm';
import { typeormExecutor } from 'oncely/orm/typeorm';

interface Order {
  caller: string;
  key: string;
  item: string;
  qty: number;
}
const Order = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  columns: {
    caller: { type: String, primary: true },
    key: { type: String, primary: true },
    item: { type: String },
    qty: { type: Number },
  },
});

// The app's DataSource on a SQLite file; the ledger's tables go in the same file.
const dataSource = new DataSource({
  type: 'better-sqlite3',
  database: process.env.DB_FILE ?? 'shop.db',
  entities: [Order],
  synchronize: true, // creates the orders table (use migrations in production)
});
await dataSource.initialize();
const ledger = createLedger({
  store: createOrmLedgerStore({ executor: typeormExecutor(dataSource) }),
});
await ledger.ready();

const app = Fastify();
await app.register(fastifyIdempotency({ ledger, scopeOf: () => 'default' }));
app.post('/orders', async (request, reply) => {
  const { item, qty } = request.body as { item: string; qty: number };
  // tx is the EntityManager of TypeORM's transaction: the order commits with the receipt.
  const { tx, scope, key } = idempotencyOf(request, ledger)!;
  await tx.insert(Order, { caller: scope, key, item, qty });
  return reply.code(201).send({ order: key, item, qty });
});
const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => void app.close().then(() => dataSource.destroy()));
