// The Fetch adapter called as a platform calls it: a handler given `new Request(...)` and the
// platform's other arguments, no socket.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { idempotencyOf, idempotentHandler } from '#oncely/http/fetch/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';

/** A framework's own Request class, as Next.js's NextRequest is. */
class PlatformRequest extends Request {
  readonly nextUrl = new URL(this.url);
}

const order = (key: string | undefined, body: string, method = 'POST'): PlatformRequest =>
  new PlatformRequest('https://shop.example/api/orders?via=test', {
    method,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer alice',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    ...(method === 'GET' ? {} : { body }),
  });

/** Next.js passes the route's params as a second argument. */
type RouteArgs = [{ params: Promise<{ shop: string }> }];

function setUp() {
  const store = createMemoryStore();
  const seen: Array<{ request: Request; args: RouteArgs }> = [];
  const errors: unknown[] = [];
  let failNext = false;
  const scopes: Request[] = [];
  const handler = idempotentHandler<MemoryTx, unknown, RouteArgs>(
    {
      ledger: createLedger({ store }),
      scopeOf: (request) => {
        scopes.push(request);
        return request.headers.get('authorization')?.slice('Bearer '.length);
      },
      maxBodyBytes: 64,
      onError: (error) => errors.push(error),
    },
    async (request, ...args) => {
      seen.push({ request, args });
      if (request.method === 'GET') return new Response('read');
      const context = idempotencyOf<MemoryTx>(request);
      const { item } = (await request.json()) as { item: string };
      context?.tx.set('orders', context.key, item);
      if (failNext) {
        failNext = false;
        throw new Error('payment service down');
      }
      const { shop } = await args[0].params;
      return Response.json({ item, shop }, { status: 201, headers: { location: '/o/1' } });
    },
  );
  const params = { params: Promise.resolve({ shop: 'tea-house' }) };
  return {
    store,
    seen,
    errors,
    scopes,
    params,
    handler,
    failNext: () => (failNext = true),
  };
}

describe('oncely/fetch: idempotentHandler', () => {
  it("hands the handler the platform's own request, its body unread, and its other arguments", async () => {
    const app = setUp();
    const request = order('k-1', '{"item":"tea"}');
    const response = await app.handler(request, app.params);
    assert.equal(response.status, 201);
    assert.deepEqual(await response.json(), { item: 'tea', shop: 'tea-house' });
    assert.equal(app.seen.length, 1);
    assert.equal(app.seen[0]?.request, request, 'the same object: a NextRequest keeps nextUrl');
    assert.equal(app.seen[0]?.args[0], app.params);
    assert.equal(app.scopes[0], request, 'scopeOf is given the same request');
    assert.equal(idempotencyOf(request)?.key, 'k-1');
    assert.deepEqual(app.store.entries('orders'), [['k-1', 'tea']]);
  });

  it('replays the receipt with Idempotent-Replayed: true without running the handler; another payload is 422', async () => {
    const app = setUp();
    await app.handler(order('k-1', '{"item":"tea"}'), app.params);
    const replay = await app.handler(order('k-1', '{"item":"tea"}'), app.params);
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.headers.get('location'), '/o/1');
    assert.deepEqual(await replay.json(), { item: 'tea', shop: 'tea-house' });
    const other = await app.handler(order('k-1', '{"item":"cake"}'), app.params);
    assert.equal(other.status, 422);
    assert.equal(app.seen.length, 1);
  });

  it('a handler that throws is a 500 problem: its writes roll back and the retry runs it again', async () => {
    const app = setUp();
    app.failNext();
    const failed = await app.handler(order('k-2', '{"item":"tea"}'), app.params);
    assert.equal(failed.status, 500);
    assert.match(failed.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal(app.errors.length, 1);
    assert.deepEqual(app.store.entries('orders'), []);
    const retried = await app.handler(order('k-2', '{"item":"tea"}'), app.params);
    assert.equal(retried.status, 201);
    assert.equal(app.seen.length, 2);
  });

  it('refuses before the handler: no key is 400, a body over maxBodyBytes 413, no caller 401', async () => {
    const app = setUp();
    assert.equal((await app.handler(order(undefined, '{"item":"tea"}'), app.params)).status, 400);
    const large = order('k-3', JSON.stringify({ item: 'x'.repeat(100) }));
    assert.equal((await app.handler(large, app.params)).status, 413);
    const anonymous = new Request('https://shop.example/api/orders', {
      method: 'POST',
      headers: { 'idempotency-key': 'k-4' },
      body: '{}',
    });
    assert.equal((await app.handler(anonymous, app.params)).status, 401);
    assert.equal(app.seen.length, 0);
  });

  it('a method outside `methods` reaches the handler untouched, with no context', async () => {
    const app = setUp();
    const read = order(undefined, '', 'GET');
    const response = await app.handler(read, app.params);
    assert.equal(await response.text(), 'read');
    assert.equal(app.seen[0]?.request, read);
    assert.equal(idempotencyOf(read), undefined);
  });

  it('a request whose body was read before the guard is a 500, reported, never run unguarded', async () => {
    const app = setUp();
    const request = order('k-5', '{"item":"tea"}');
    await request.text();
    assert.equal((await app.handler(request, app.params)).status, 500);
    assert.equal(app.errors.length, 1);
    assert.equal(app.seen.length, 0);
  });

  it('a client that goes away while the handler runs: its writes roll back and the retry runs again', async () => {
    const store = createMemoryStore();
    const client = new AbortController();
    let runs = 0;
    const handler = idempotentHandler(
      { ledger: createLedger({ store }), onError: () => {} },
      async (request) => {
        const context = idempotencyOf<MemoryTx>(request);
        context?.tx.set('orders', context.key, `run ${++runs}`);
        if (runs === 1) client.abort(); // the platform aborts the request's signal
        return Response.json({ runs }, { status: 201 });
      },
    );
    const post = (signal?: AbortSignal): Promise<Response> =>
      handler(
        new Request('https://shop.example/api/orders', {
          method: 'POST',
          headers: { 'idempotency-key': 'k-6' },
          body: '{}',
          ...(signal === undefined ? {} : { signal }),
        }),
      );
    await post(client.signal);
    assert.deepEqual(store.entries('orders'), [], 'the guard reads a clone; it follows the signal');
    const retried = await post();
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    assert.deepEqual(store.entries('orders'), [['k-6', 'run 2']]);
  });

  it('checks its options when made: a scopeOf that is not a function names the option', () => {
    const ledger = createLedger({ store: createMemoryStore() });
    assert.throws(
      () => idempotentHandler({ ledger, scopeOf: 'alice' as never }, () => new Response()),
      (error: unknown) => isInvalidOptionError(error) && error.message.includes('scopeOf'),
    );
  });
});
