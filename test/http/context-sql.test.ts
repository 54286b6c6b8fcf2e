import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotentHandler,
} from '#oncely/http/index.js';
import { createLedger, type LedgerStore } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { describePostgres, storeInFreshSchema } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The one effect handler of this file, written once against `context.sql`: it records an order,
 * reads it back, and answers with the inserted id. It never looks at which store it runs on.
 */
const placeOrder: IdempotentHandler<unknown> = async (request, context) => {
  if (!context) return new Response('not found', { status: 404 });
  const { item, qty, fail } = (await request.json()) as {
    item: string;
    qty: number;
    fail?: boolean;
  };
  const { insertedId, rowCount } = await context.sql.run(
    'INSERT INTO orders (item, qty, caller) VALUES ($1, $2, $3) RETURNING id',
    [item, qty, context.scope],
  );
  if (fail) throw new Error('payment refused after the insert');
  const order = await context.sql.get<{ id: number; item: string; qty: number }>(
    'SELECT id, item, qty FROM orders WHERE id = $1',
    [insertedId],
  );
  const mine = await context.sql.all<{ n: number }>(
    'SELECT CAST(count(*) AS INTEGER) AS n FROM orders WHERE caller = $1',
    [context.scope],
  );
  return Response.json({ order, rowCount, ordersOfCaller: mine[0]?.n }, { status: 201 });
};

/** The order table's DDL: the one place the dialects differ (an auto-numbered key). */
const ordersTable = (dialect: 'sqlite' | 'postgres'): string =>
  `CREATE TABLE orders (id ${dialect === 'postgres' ? 'SERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY'}, item TEXT NOT NULL, qty INTEGER NOT NULL, caller TEXT NOT NULL)`;

function runContextSqlCases(
  name: string,
  open: () => Promise<{ store: LedgerStore<unknown>; close(): Promise<void> }>,
  skip?: string,
): void {
  describe(`context.sql on ${name}`, { skip: skip ?? false }, () => {
    it('runs the same handler: the id comes back, a replay repeats it, a failure rolls the insert back', async () => {
      const { store, close } = await open();
      try {
        const ledger = createLedger({ store });
        await ledger.ready();
        await store.transaction(
          async (tx) => void (await store.sql!(tx).run(ordersTable(store.sql!(tx).dialect))),
        );
        const handle = withIdempotency(
          createIdempotencyMiddleware({ ledger, scopeOf: () => 'alice' }),
          placeOrder,
        );
        const post = (key: string, body: object) =>
          handle(
            new Request('http://shop.test/orders', {
              method: 'POST',
              headers: { 'idempotency-key': key, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            }),
          );

        const first = await post('order-1', { item: 'tea', qty: 2 });
        assert.equal(first.status, 201);
        assert.deepEqual(await first.json(), {
          order: { id: 1, item: 'tea', qty: 2 },
          rowCount: 1,
          ordersOfCaller: 1,
        });

        const replay = await post('order-1', { item: 'tea', qty: 2 });
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.deepEqual(await replay.json(), {
          order: { id: 1, item: 'tea', qty: 2 },
          rowCount: 1,
          ordersOfCaller: 1,
        });

        const failed = await post('order-2', { item: 'cake', qty: 1, fail: true });
        assert.equal(failed.status, 500);
        const second = await post('order-3', { item: 'cake', qty: 1 });
        assert.equal(second.status, 201);
        // The failed insert rolled back with its receipt: one more order, not two.
        const body = (await second.json()) as { order: { item: string }; ordersOfCaller: number };
        assert.equal(body.order.item, 'cake');
        assert.equal(body.ordersOfCaller, 2);
      } finally {
        await close();
      }
    });
  });
}

const dir = tempDir('oncely-context-sql-');

runContextSqlCases('SQLite', async () => {
  const store = createSqliteStore({ database: () => openSqliteDatabase(join(dir, 'shop.db')) });
  return { store: store as LedgerStore<unknown>, close: () => store.close() };
});

await describePostgres('context.sql', ({ url, options }) => {
  runContextSqlCases(
    'PostgreSQL',
    async () => storeInFreshSchema(url, 'oncely_ctx_sql'),
    options.skip,
  );
});

it('context.sql on the memory store rejects with a clear error instead of running against nothing', async () => {
  const errors: unknown[] = [];
  const ledger = createLedger({ store: createMemoryStore() });
  const handle = withIdempotency(
    createIdempotencyMiddleware({ ledger, scopeOf: () => 'alice', onError: (e) => errors.push(e) }),
    placeOrder,
  );
  const response = await handle(
    new Request('http://shop.test/orders', {
      method: 'POST',
      headers: { 'idempotency-key': 'k-1' },
      body: '{"item":"tea","qty":1}',
    }),
  );
  assert.equal(response.status, 500);
  assert.match(String(errors[0]), /the memory store has no SQL: use context\.tx/);
});
