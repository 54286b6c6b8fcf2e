// The middleware's one order: scope, key, body (read once, within the limit), the service's
// validate step, ledger, handler with the checked value. Each step answers before the next runs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createIdempotencyMiddleware,
  defineProblem,
  problemResponse,
  withIdempotency,
  type IdempotencyContext,
} from '#oncely/http/index.js';
import type { AdmittedRequest } from '#oncely/http/request-validation.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

const TOO_SHORT = defineProblem('too_short', 422, 'Body too short');

function setUp() {
  const steps: string[] = [];
  const ledger = createLedger({
    store: createMemoryStore(),
    clock: new VirtualClock({ startAt: 1_700_000_000_000 }),
  });
  const seen: Array<IdempotencyContext<MemoryTx, number> | AdmittedRequest<number>> = [];
  const middleware = createIdempotencyMiddleware<MemoryTx, number>({
    ledger,
    maxBodyBytes: 8,
    scopeOf: (request) => {
      steps.push('scope');
      return request.headers.get('x-caller') ?? undefined;
    },
    validate: ({ body, scope }) => {
      steps.push(`validate:${scope}`);
      return body.byteLength >= 2
        ? { ok: true, value: body.byteLength }
        : { ok: false, response: problemResponse(TOO_SHORT, 'at least 2 bytes') };
    },
    fingerprintOf: (input) => {
      steps.push(`fingerprint:${String(input.value)}`);
      return `fp-${new TextDecoder().decode(input.body)}`;
    },
  });
  const handle = withIdempotency(middleware, async (request, context) => {
    steps.push('handler');
    if (context) seen.push(context);
    return new Response(`got ${await request.text()}`, { status: 201 });
  });
  const send = (init: { caller?: string; key?: string; body?: string }) =>
    handle(
      new Request('http://api.test/things', {
        method: 'POST',
        headers: {
          ...(init.caller ? { 'x-caller': init.caller } : {}),
          ...(init.key ? { 'idempotency-key': init.key } : {}),
        },
        body: init.body ?? 'hello',
      }),
    );
  return { steps, seen, send, ledger, middleware };
}

describe('the middleware order', () => {
  it('401 with a WWW-Authenticate challenge comes first, before the key is looked at', async () => {
    const t = setUp();
    const response = await t.send({ key: '   ' });
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
    assert.deepEqual(t.steps, ['scope']);
  });

  it('a missing or malformed key is 400 before the body is read', async () => {
    const t = setUp();
    assert.equal((await t.send({ caller: 'alice', body: 'x'.repeat(100) })).status, 400);
    assert.equal(
      (await t.send({ caller: 'alice', key: '   ', body: 'x'.repeat(100) })).status,
      400,
    );
    assert.deepEqual(t.steps, ['scope', 'scope']);
  });

  it('413 past the limit comes before validate; validate refusals never reach the ledger', async () => {
    const t = setUp();
    const large = await t.send({ caller: 'alice', key: 'k', body: 'x'.repeat(9) });
    assert.equal(large.status, 413);
    assert.equal(((await large.json()) as { maxBodyBytes: number }).maxBodyBytes, 8);
    const short = await t.send({ caller: 'alice', key: 'k', body: 'x' });
    assert.equal(short.status, 422);
    assert.equal(((await short.json()) as { code: string }).code, 'too_short');
    assert.deepEqual(t.steps, ['scope', 'scope', 'validate:alice']);
    assert.equal((await t.ledger.lookup('alice', 'k')).kind, 'never_seen', 'a refusal pins no key');
  });

  it('the handler gets the scope, the key, the bytes and the checked value; the fingerprint gets the value', async () => {
    const t = setUp();
    const response = await t.send({ caller: 'alice', key: 'k', body: 'hello' });
    assert.equal(response.status, 201);
    assert.equal(
      await response.text(),
      'got hello',
      'the handler can still read an identical body',
    );
    assert.deepEqual(t.steps, ['scope', 'validate:alice', 'fingerprint:5', 'handler']);
    const [context] = t.seen as Array<IdempotencyContext<MemoryTx, number>>;
    assert.deepEqual(
      [context?.scope, context?.key, context?.value, new TextDecoder().decode(context?.body)],
      ['alice', 'k', 5, 'hello'],
    );
  });

  it('onKeyless answers a request without a key outside the ledger, after scope, body and validate', async () => {
    const ledger = createLedger({ store: createMemoryStore(), clock: new VirtualClock() });
    const keyless: Array<AdmittedRequest<string>> = [];
    const middleware = createIdempotencyMiddleware<MemoryTx, string>({
      ledger,
      scopeOf: () => 'alice',
      validate: ({ body }) => ({ ok: true, value: new TextDecoder().decode(body).toUpperCase() }),
      onKeyless: (_request, admitted) => {
        keyless.push(admitted);
        return new Response('keyless', { status: 202 });
      },
    });
    const response = await middleware(
      new Request('http://api.test/x', { method: 'POST', body: 'hi' }),
      () => new Response('never', { status: 500 }),
    );
    assert.equal(response.status, 202);
    assert.deepEqual(
      keyless.map((k) => [k.scope, k.value]),
      [['alice', 'HI']],
    );
  });

  it('options naming validate, onKeyless and unauthenticated are checked once', () => {
    const ledger = createLedger({ store: createMemoryStore() });
    assert.throws(
      // @ts-expect-error not a function
      () => createIdempotencyMiddleware({ ledger, scopeOf: () => 'a', validate: 3 }),
      /invalid option validate/,
    );
    assert.throws(
      // @ts-expect-error not a function
      () => createIdempotencyMiddleware({ ledger, scopeOf: () => 'a', onKeyless: 'no' }),
      /invalid option onKeyless/,
    );
  });
});
