import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotentHandler,
} from '#oncely/http/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { stepKey } from '#oncely/contract/step-key.js';
import {
  createSqliteStore,
  createSqlStepStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { createMemoryStepStore, createMemoryStore } from '#oncely/stores/memory/index.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-steps-context-');
let n = 0;

async function shop(route: IdempotentHandler<unknown>, writes?: 'deferred') {
  const store = createSqliteStore({ database: () => openSqliteDatabase(join(dir, `s-${++n}.db`)) });
  await store.write((tx) => tx.exec('CREATE TABLE orders (id TEXT NOT NULL)'));
  const ledger = createLedger({ store, steps: createSqlStepStore(store) });
  await ledger.ready();
  const errors: unknown[] = [];
  const handle = withIdempotency(
    createIdempotencyMiddleware({
      ledger,
      scopeOf: () => 'alice',
      onError: (error) => errors.push(error),
      ...(writes ? { writes } : {}),
    }),
    route,
  );
  const post = (key: string) =>
    handle(
      new Request('http://shop.test/orders', {
        method: 'POST',
        headers: { 'idempotency-key': key },
        body: '{}',
      }),
    );
  const orders = () =>
    store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM orders')!.n);
  return { post, errors, orders, close: () => store.close() };
}

describe('context.step in the middleware', () => {
  it("gives the step the derived key, and the route's own writes after the last step commit with the receipt", async () => {
    const s = await shop(async (_request, context) => {
      const charged = await context!.step('charge', ({ key }) => key);
      await context!.sql.run('INSERT INTO orders (id) VALUES ($1)', [charged]);
      return Response.json({ charged }, { status: 201 });
    });
    try {
      const response = await s.post('k1');
      assert.equal(response.status, 201);
      assert.deepEqual(await response.json(), { charged: stepKey('alice', 'k1', 'charge') });
      assert.equal(await s.orders(), 1);
    } finally {
      await s.close();
    }
  });

  it("refuses a step after the route's own statements with a clear error, instead of waiting forever", async () => {
    const s = await shop(async (_request, context) => {
      await context!.sql.run('INSERT INTO orders (id) VALUES ($1)', ['early']);
      await context!.step('charge', () => 'ch');
      return new Response('done', { status: 201 });
    });
    try {
      const response = await s.post('k2');
      assert.equal(response.status, 500);
      assert.match(String(s.errors[0]), /after the route's own statements/);
      assert.equal(await s.orders(), 0, 'rolled back');
    } finally {
      await s.close();
    }
  });

  it('refuses a step after statements sent through context.tx itself, instead of waiting forever', async () => {
    const s = await shop(async (_request, context) => {
      const tx = context!.tx as SqliteTx;
      await tx.begin();
      tx.run('INSERT INTO orders (id) VALUES (?)', 'early');
      await context!.step('charge', () => 'ch');
      return new Response('done', { status: 201 });
    });
    try {
      const response = await s.post('k2tx');
      assert.equal(response.status, 500);
      assert.equal((s.errors[0] as { code?: string }).code, 'step_after_writes');
      assert.equal(await s.orders(), 0, 'rolled back');
    } finally {
      await s.close();
    }
  });

  it('a route with deferred writes has no steps: step rejects, saying why', async () => {
    const s = await shop(async (_request, context) => {
      await context!.step('charge', () => 'ch');
      return new Response('done', { status: 201 });
    }, 'deferred');
    try {
      assert.equal((await s.post('k3')).status, 500);
      assert.match(String(s.errors[0]), /writes: 'deferred'/);
    } finally {
      await s.close();
    }
  });

  it('a ledger without a step store refuses a step with no_step_store', async () => {
    const ledger = createLedger({ store: createMemoryStore() });
    const errors: unknown[] = [];
    const handle = withIdempotency(
      createIdempotencyMiddleware({ ledger, onError: (error) => errors.push(error) }),
      async (_request, context) => {
        await context!.step('charge', () => 'ch');
        return new Response('done');
      },
    );
    const response = await handle(
      new Request('http://shop.test/', { method: 'POST', headers: { 'idempotency-key': 'k' } }),
    );
    assert.equal(response.status, 500);
    assert.equal((errors[0] as { code?: string }).code, 'no_step_store');
  });
});

describe('context.step after a timeout', () => {
  it('an abort after the charge step (a timeout answered for the handler): the retry resumes after it', async () => {
    const store = createMemoryStore();
    const ledger = createLedger({ store, steps: createMemoryStepStore(store) });
    let charges = 0;
    let release = (): void => {};
    let charged = (): void => {};
    const afterCharge = new Promise<void>((resolve) => (charged = resolve));
    let runs = 0;
    const handle = withIdempotency(
      createIdempotencyMiddleware({ ledger, scopeOf: () => 'alice', onError: () => {} }),
      async (_request, context) => {
        runs++;
        const charge = await context!.step('charge', () => `ch-${++charges}`);
        if (runs === 1) {
          charged();
          await new Promise<void>((resolve) => (release = resolve)); // the slow part times out
        }
        return Response.json({ charge }, { status: 201 });
      },
    );
    const post = (signal?: AbortSignal) =>
      handle(
        new Request('http://shop.test/orders', {
          method: 'POST',
          headers: { 'idempotency-key': 'k-timeout' },
          body: '{}',
          ...(signal ? { signal } : {}),
        }),
      );
    const aborter = new AbortController();
    const first = post(aborter.signal);
    await afterCharge;
    aborter.abort(new Error('answered 408 by the server'));
    release();
    assert.equal((await first).status, 500, 'rolled back: nobody hears this answer');
    const retry = await post();
    assert.equal(retry.status, 201);
    assert.deepEqual(await retry.json(), { charge: 'ch-1' });
    assert.equal(charges, 1, 'the charge ran once');
  });
});
