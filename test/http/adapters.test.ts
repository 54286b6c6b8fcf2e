import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import {
  createIdempotencyMiddleware,
  toNodeListener,
  withIdempotency,
  type IdempotentHandler,
} from '#oncely/http/index.js';
import { idempotency as honoIdempotency } from '#oncely/http/hono/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';

/** One middleware + one notes handler; each adapter below serves it. */
function setUp() {
  const store = createMemoryStore();
  const middleware = createIdempotencyMiddleware({
    ledger: createLedger({ store }),
    scopeOf: (request) => request.headers.get('x-caller') ?? undefined,
    maxBodyBytes: 64,
  });
  const handler: IdempotentHandler<MemoryTx> = async (request, context) => {
    if (!context) return new Response(`get ${new URL(request.url).pathname}`);
    const { title } = (await request.json()) as { title: string };
    context.tx.set('notes', context.key, title);
    return Response.json(
      { title, url: new URL(request.url).pathname },
      { status: 201, headers: { 'set-cookie': 'a=1' } },
    );
  };
  return { store, middleware, handler };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const post = (base: string, path: string, body: string, key = 'key-1') =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'x-caller': 'alice', 'content-type': 'application/json' },
    body,
  });

/** The same story over each real server: executed, replayed, 422, 413, passthrough. */
async function story(
  base: string,
  path: string,
  store: ReturnType<typeof createMemoryStore>,
): Promise<void> {
  const first = await post(base, path, '{"title":"one"}');
  assert.equal(first.status, 201);
  assert.deepEqual(await first.json(), { title: 'one', url: path });
  assert.equal(first.headers.get('set-cookie'), 'a=1');
  const again = await post(base, path, '{"title":"one"}');
  assert.equal(again.status, 201);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(await again.json(), { title: 'one', url: path });
  const reused = await post(base, path, '{"title":"two"}');
  assert.equal(reused.status, 422);
  assert.equal(reused.headers.get('content-type'), 'application/problem+json');
  assert.equal(
    (await post(base, path, JSON.stringify({ title: 'x'.repeat(100) }), 'key-2')).status,
    413,
  );
  const get = await fetch(`${base}${path}`);
  assert.equal(await get.text(), `get ${path}`);
  assert.deepEqual(store.entries('notes'), [['key-1', 'one']]);
}

describe('adapters', () => {
  it('node:http: toNodeListener serves the middleware on a real socket', async () => {
    const { store, middleware, handler } = setUp();
    const server = createServer(toNodeListener(withIdempotency(middleware, handler)));
    const base = await listen(server);
    try {
      await story(base, '/notes', store);
      // A chunked body with no Content-Length is cut off at the limit too.
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${base}/notes`,
          { method: 'POST', headers: { 'idempotency-key': 'key-3', 'x-caller': 'alice' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        for (let i = 0; i < 10; i++) req.write('0123456789');
        req.end();
      });
      assert.equal(status, 413);
    } finally {
      await close(server);
    }
  });

  it('node:http: a handler that throws outside the middleware answers 500 problem+json', async () => {
    const errors: unknown[] = [];
    const server = createServer(
      toNodeListener(
        () => {
          throw new Error('boom');
        },
        { onError: (e) => errors.push(e) },
      ),
    );
    const base = await listen(server);
    try {
      const response = await fetch(base);
      assert.equal(response.status, 500);
      assert.equal(response.headers.get('content-type'), 'application/problem+json');
      assert.equal(errors.length, 1);
    } finally {
      await close(server);
    }
  });

  it('node:http: a path that starts with // stays a path, never a host', async () => {
    const seen: string[] = [];
    const server = createServer(
      toNodeListener((request) => {
        const url = new URL(request.url);
        seen.push(`${url.host} ${url.pathname}${url.search}`);
        return new Response(url.pathname);
      }),
    );
    const base = await listen(server);
    try {
      const answered = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        // fetch would normalise the path; a raw request sends the target exactly as written.
        const req = httpRequest(base, { path: '//x/y?z=1' }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(answered.status, 200);
      assert.equal(answered.body, '//x/y');
      assert.deepEqual(seen, [`${new URL(base).host} //x/y?z=1`]);
    } finally {
      await close(server);
    }
  });

  it('Hono: idempotency() in front of routes; the handler gets the tx from c.get', async () => {
    const store = createMemoryStore();
    const guard = honoIdempotency({
      ledger: createLedger({ store }),
      scopeOf: (c) => c.req.header('x-caller'),
    });
    const app = new Hono<{
      Variables: {
        idempotency: import('#oncely/http/index.js').IdempotencyContext<MemoryTx> | undefined;
      };
    }>();
    app.use('/notes', guard);
    app.use('/boom', guard);
    app.onError((_error, c) => c.text('failed', 500));
    let runs = 0;
    let booms = 0;
    app.post('/boom', (c) => {
      booms++;
      c.get('idempotency')?.tx.set('notes', 'boom', 'must roll back');
      throw new Error('boom');
    });
    app.post('/notes', async (c) => {
      const context = c.get('idempotency');
      const { title } = await c.req.json<{ title: string }>();
      context?.tx.set('notes', context.key, title);
      runs++;
      return c.json({ title }, 201, { etag: '"1"' });
    });
    app.get('/notes', (c) => c.text(`get, context ${String(c.get('idempotency'))}`));
    const send = (body: string) =>
      app.request('/notes', {
        method: 'POST',
        headers: {
          'idempotency-key': 'k',
          'x-caller': 'alice',
          'content-type': 'application/json',
        },
        body,
      });

    const first = await send('{"title":"h"}');
    assert.equal(first.status, 201);
    assert.deepEqual(await first.json(), { title: 'h' });
    const again = await send('{"title":"h"}');
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('etag'), '"1"');
    assert.deepEqual(await again.json(), { title: 'h' });
    assert.equal((await send('{"title":"other"}')).status, 422);
    assert.equal(await (await app.request('/notes')).text(), 'get, context undefined');
    assert.equal(runs, 1);
    assert.deepEqual(store.entries('notes'), [['k', 'h']]);

    // Hono turns a thrown error into its own 500 response: not stored, rolled back, retried.
    const boom = () =>
      app.request('/boom', {
        method: 'POST',
        headers: { 'idempotency-key': 'kb', 'x-caller': 'alice' },
        body: '{}',
      });
    assert.equal((await boom()).status, 500);
    assert.equal((await boom()).status, 500);
    assert.equal(booms, 2);
    assert.deepEqual(store.entries('notes'), [['k', 'h']]);
  });
});
