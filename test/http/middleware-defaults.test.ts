import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotencyOptions,
} from '#oncely/http/index.js';
import { SINGLE_TENANT_SCOPE } from '#oncely/http/idempotency-options.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';

function app(options: Partial<IdempotencyOptions<MemoryTx>> = {}) {
  const seen: Array<string | undefined> = [];
  const handle = withIdempotency(
    createIdempotencyMiddleware<MemoryTx>({
      ledger: createLedger({ store: createMemoryStore() }),
      ...options,
    }),
    async (request, context) => {
      seen.push(context?.scope);
      return new Response(await request.text(), { status: 201 });
    },
  );
  const post = (key: string | undefined, body = '{"a":1}') =>
    handle(
      new Request('http://app.test/orders', {
        method: 'POST',
        body,
        headers: key === undefined ? {} : { 'idempotency-key': key },
      }),
    );
  return { post, seen };
}

describe('the middleware with defaults for the simple case', () => {
  it('without scopeOf every request is the single tenant: no 401, keys still guard', async () => {
    const { post, seen } = app();
    assert.equal((await post('k-1')).status, 201);
    assert.equal((await post('k-1')).headers.get('idempotent-replayed'), 'true');
    assert.equal((await post('k-1', '{"a":2}')).status, 422);
    assert.deepEqual(seen, [SINGLE_TENANT_SCOPE]);
  });

  it("a keyless POST is 400 by default; with missingKey 'pass-through' the handler runs outside the ledger", async () => {
    assert.equal((await app().post(undefined)).status, 400);
    const { post, seen } = app({ missingKey: 'pass-through' });
    const response = await post(undefined, 'as before');
    assert.equal(response.status, 201);
    assert.equal(await response.text(), 'as before', 'the body reaches the handler unread');
    assert.equal(
      (await post(undefined, 'as before')).headers.get('idempotent-replayed'),
      null,
      'nothing was stored',
    );
    assert.deepEqual(seen, [undefined, undefined]);
  });

  it('refuses a missingKey it does not know, and pass-through together with onKeyless', () => {
    const ledger = createLedger({ store: createMemoryStore() });
    assert.throws(
      () => createIdempotencyMiddleware({ ledger, missingKey: 'allow' as never }),
      (e) => isInvalidOptionError(e) && e.option === 'missingKey',
    );
    assert.throws(
      () =>
        createIdempotencyMiddleware({
          ledger,
          missingKey: 'pass-through',
          onKeyless: () => new Response(),
        }),
      (e) => isInvalidOptionError(e) && e.option === 'missingKey',
    );
    assert.throws(
      () => createIdempotencyMiddleware({ ledger, scopeOf: 'alice' as never }),
      (e) => isInvalidOptionError(e) && e.option === 'scopeOf',
    );
  });
});
