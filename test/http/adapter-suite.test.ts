// One suite, five frameworks: the same cases against the Express middleware, the Fastify plugin,
// the Hono middleware, the node:http wrapper and the Fetch handler wrapper, each in front of an
// unchanged route.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import type { Validate } from '#oncely/http/index.js';
import { FRAMEWORK_APPS, type RunningApp } from './framework-apps.js';

const ORDER = '{"item":"tea","qty":2}';

/** The service's own check: at most 100 of an item; the route gets the quantity and the caller. */
const validateOrder: Validate<unknown> = ({ body, scope }) => {
  const { qty } = JSON.parse(new TextDecoder().decode(body)) as { qty: number };
  return qty > 100
    ? { ok: false, response: Response.json({ code: 'too_many' }, { status: 400 }) }
    : { ok: true, value: { qty, scope } };
};

function post(
  app: RunningApp,
  init: { key?: string; token?: string; body?: string },
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key !== undefined) headers['idempotency-key'] = init.key;
  if (init.token !== undefined) headers['authorization'] = `Bearer ${init.token}`;
  return fetch(`${app.url}/orders`, { method: 'POST', headers, body: init.body ?? ORDER });
}

/** An answer written from known bytes says its length, as the route did, rather than go chunked. */
function assertLengthKnown(response: Response, body: string): void {
  assert.equal(response.headers.get('content-length'), String(Buffer.byteLength(body)));
  assert.equal(response.headers.get('transfer-encoding'), null);
}

for (const framework of FRAMEWORK_APPS) {
  describe(`${framework.name}: idempotency in front of an unchanged route`, () => {
    let app: RunningApp;
    before(async () => {
      app = await framework.start(
        { ledger: createLedger({ store: createMemoryStore() }), onError: () => {} },
        true,
      );
    });
    after(() => app.close());

    it('a new key runs the route once and answers with its status, headers and body', async () => {
      const response = await post(app, { key: 'k-new', token: 'token-alice' });
      assert.equal(response.status, 201);
      assert.equal(response.headers.get('x-order-id'), 'order-1');
      assert.equal(response.headers.get('idempotent-replayed'), null);
      const body = await response.text();
      assert.deepEqual(JSON.parse(body), { id: 'order-1', user: 'alice', item: 'tea', qty: 2 });
      assertLengthKnown(response, body);
      assert.equal(app.book.runs, 1);
      assert.deepEqual(app.book.keys, ['k-new'], 'the route sees the key in its context');
    });

    it('the same key and payload is replayed with Idempotent-Replayed: true; the route does not run again', async () => {
      const runs = app.book.runs;
      const replay = await post(app, { key: 'k-new', token: 'token-alice' });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      const body = await replay.text();
      assert.deepEqual(JSON.parse(body), { id: 'order-1', user: 'alice', item: 'tea', qty: 2 });
      assertLengthKnown(replay, body);
      assert.equal(app.book.runs, runs);
    });

    it('the same key with another payload is 422 problem+json, and the route does not run', async () => {
      const runs = app.book.runs;
      const mismatch = await post(app, {
        key: 'k-new',
        token: 'token-alice',
        body: '{"item":"cake","qty":9}',
      });
      assert.equal(mismatch.status, 422);
      assert.match(mismatch.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(((await mismatch.json()) as { code: string }).code, 'key_reused');
      assert.equal(app.book.runs, runs);
    });

    it("the scope comes from the user the auth step set: bob's same key is his own order; no user is 401", async () => {
      const bob = await post(app, {
        key: 'k-new',
        token: 'token-bob',
        body: '{"item":"cake","qty":9}',
      });
      assert.equal(bob.status, 201, "not a conflict with alice's key");
      assert.equal(bob.headers.get('idempotent-replayed'), null);
      assert.equal(((await bob.json()) as { user: string }).user, 'bob');
      const anonymous = await post(app, { key: 'k-anon' });
      assert.equal(anonymous.status, 401);
      assert.ok(anonymous.headers.get('www-authenticate'));
    });

    it('a POST without a key is 400 by default; a GET passes through untouched', async () => {
      const keyless = await post(app, { token: 'token-alice' });
      assert.equal(keyless.status, 400);
      assert.equal(((await keyless.json()) as { code: string }).code, 'missing_key');
      const read = await fetch(`${app.url}/orders`);
      assert.equal(read.status, 200);
      assert.deepEqual(await read.json(), { runs: app.book.runs });
    });

    it('a 5xx from the route is passed on but not stored: the retry runs the route again', async () => {
      app.book.failNext = true;
      const failed = await post(app, { key: 'k-fail', token: 'token-alice' });
      assert.equal(failed.status, 500);
      const retried = await post(app, { key: 'k-fail', token: 'token-alice' });
      assert.equal(retried.status, 201);
      assert.equal(retried.headers.get('idempotent-replayed'), null);
    });
  });

  describe(`${framework.name}: defaults for the simple case`, () => {
    it('no scopeOf: one tenant, keys work without authentication; pass-through serves keyless requests', async () => {
      const app = await framework.start(
        { ledger: createLedger({ store: createMemoryStore() }), missingKey: 'pass-through' },
        false,
      );
      try {
        const first = await post(app, { key: 'k-1' });
        assert.equal(first.status, 201);
        assert.equal((await post(app, { key: 'k-1' })).headers.get('idempotent-replayed'), 'true');
        const keyless = await post(app, {});
        assert.equal(keyless.status, 201, 'served as before oncely');
        assert.equal(app.book.runs, 2);
        assert.deepEqual(app.book.keys, ['k-1', undefined], 'outside the ledger: no context');
      } finally {
        await app.close();
      }
    });
  });
  describe(`${framework.name}: validate`, () => {
    it("a refusal of validate is answered and pins nothing; the route gets validate's value", async () => {
      const app = await framework.start(
        { ledger: createLedger({ store: createMemoryStore() }), validate: validateOrder },
        false,
      );
      try {
        const refused = await post(app, { key: 'k-v', body: '{"item":"tea","qty":500}' });
        assert.equal(refused.status, 400);
        assert.deepEqual(await refused.json(), { code: 'too_many' });
        assert.equal(app.book.runs, 0, 'refused before the route');
        const accepted = await post(app, { key: 'k-v' });
        assert.equal(accepted.status, 201, 'the same key with another payload: the key was free');
        assert.deepEqual(app.book.values, [{ qty: 2, scope: 'default' }]);
      } finally {
        await app.close();
      }
    });
  });
}
