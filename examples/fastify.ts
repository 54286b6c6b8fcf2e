import Fastify from 'fastify';
import { createLedger } from 'oncely';
import { fastifyIdempotency } from 'oncely/fastify';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';

const database = openSqliteDatabase(process.env.DB_FILE ?? 'shop.db');
database.exec('CREATE TABLE IF NOT EXISTS orders (key TEXT PRIMARY KEY, item TEXT NOT NULL)');
const ledger = createLedger({ store: createSqliteStore({ database }) });

const app = Fastify();
// One tenant, said in so many words: every request is the one caller. Clients that do not send
// keys yet are served as before (off by default).
await app.register(
  fastifyIdempotency({ ledger, scopeOf: () => 'default', missingKey: 'pass-through' }),
);

app.post('/orders', async (request, reply) => {
  const { item } = request.body as { item: string };
  const guarded = request.idempotency; // undefined for a keyless request passed through
  if (guarded)
    await guarded.sql.run('INSERT INTO orders (key, item) VALUES ($1, $2)', [guarded.key, item]);
  return reply.code(201).send({ order: guarded?.key ?? null, item });
});

await ledger.ready();
const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${url}`);
process.on('SIGTERM', () => void app.close());
