import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROBLEM_JSON } from '#oncely/contract/headers.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotencyOptions,
  type IdempotentHandler,
} from '#oncely/http/index.js';
import { DEFAULT_PROBLEM_TYPE_BASE } from '#oncely/http/problem.js';
import { createLedger, type LedgerStore } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

const START_AT = 1_700_000_000_000;

/** A notes app behind the middleware: each guarded POST writes one note through the tx. */
function setUp(
  options: Partial<IdempotencyOptions<MemoryTx>> = {},
  storeOverride?: (s: LedgerStore<MemoryTx>) => LedgerStore<MemoryTx>,
) {
  const clock = new VirtualClock({ startAt: START_AT });
  const memory = createMemoryStore();
  const store = storeOverride ? storeOverride(memory) : memory;
  const ledger = createLedger({ store, clock, leaseMs: 30_000 });
  const errors: unknown[] = [];
  const middleware = createIdempotencyMiddleware({
    ledger,
    scopeOf: (request) => /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1],
    onError: (error) => errors.push(error),
    ...options,
  });
  let calls = 0;
  let behaviour: (request: Request) => Promise<Response | undefined> = async () => undefined;
  const app: IdempotentHandler<MemoryTx> = async (request, context) => {
    if (!context) return new Response(`passed through ${request.method}`, { status: 200 });
    calls++;
    const special = await behaviour(request);
    const text = await request.text();
    context.tx.set('notes', `${context.scope}/${context.key}`, text);
    if (special) return special;
    return new Response(JSON.stringify({ created: text }), {
      status: 201,
      headers: {
        'content-type': 'application/json',
        location: '/notes/1',
        'x-request-id': `req-${calls}`,
        'set-cookie': 'session=abc',
      },
    });
  };
  const handle = withIdempotency(middleware, app);
  const send = (
    init: {
      key?: string | null;
      body?: string;
      token?: string | null;
      method?: string;
      headers?: Record<string, string>;
    } = {},
  ) => {
    const headers = new Headers(init.headers);
    if (init.key !== null) headers.set('idempotency-key', init.key ?? 'key-1');
    if (init.token !== null) headers.set('authorization', `Bearer ${init.token ?? 'alice'}`);
    const method = init.method ?? 'POST';
    return handle(
      new Request('http://api.test/notes?x=1', {
        method,
        headers,
        body: method === 'GET' ? null : (init.body ?? '{"title":"a"}'),
      }),
    );
  };
  return {
    clock,
    memory,
    send,
    errors,
    calls: () => calls,
    setBehaviour: (b: typeof behaviour) => void (behaviour = b),
  };
}

async function assertProblem(
  response: Response,
  status: number,
  code: string,
): Promise<Record<string, unknown>> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('content-type'), PROBLEM_JSON);
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(body['status'], status);
  assert.equal(body['code'], code);
  const type = `${DEFAULT_PROBLEM_TYPE_BASE}${code.replaceAll('_', '-')}`;
  assert.equal(body['type'], type);
  assert.equal(response.headers.get('link'), `<${type}>; rel="describedby"`);
  assert.equal(typeof body['title'], 'string');
  assert.equal(typeof body['detail'], 'string');
  return body;
}

describe('idempotency middleware (no sockets)', () => {
  it('runs the first request, answers it in full, and replays the receipt with Idempotent-Replayed', async () => {
    const t = setUp();
    const first = await t.send();
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(first.headers.get('x-request-id'), 'req-1', 'the first answer keeps every header');
    assert.equal(first.headers.get('set-cookie'), 'session=abc');
    const firstBody = new Uint8Array(await first.arrayBuffer());

    const replay = await t.send();
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.headers.get('content-type'), 'application/json');
    assert.equal(replay.headers.get('location'), '/notes/1');
    assert.equal(
      replay.headers.get('x-request-id'),
      null,
      'only allow-listed headers are replayed',
    );
    assert.equal(replay.headers.get('set-cookie'), null, 'a replay never hands out a session');
    assert.deepEqual(new Uint8Array(await replay.arrayBuffer()), firstBody);
    assert.equal(t.calls(), 1);
    assert.deepEqual(t.memory.entries('notes'), [['alice/key-1', '{"title":"a"}']]);
  });

  it('accepts the key as a Structured Field string too ("key-1" is key-1)', async () => {
    const t = setUp();
    await t.send({ key: 'key-1' });
    const quoted = await t.send({ key: '"key-1"' });
    assert.equal(quoted.headers.get('idempotent-replayed'), 'true');
  });

  it('400 for a missing or malformed key, before any work', async () => {
    const t = setUp();
    await assertProblem(await t.send({ key: null }), 400, 'missing_key');
    const long = await assertProblem(await t.send({ key: 'k'.repeat(256) }), 400, 'invalid_key');
    assert.match(String(long['detail']), /256 characters long; at most 255/);
    await assertProblem(await t.send({ key: '""' }), 400, 'invalid_key');
    assert.equal(t.calls(), 0);
  });

  it('401 when the app finds no authenticated caller', async () => {
    const t = setUp();
    await assertProblem(await t.send({ token: null }), 401, 'unauthenticated');
    assert.equal(t.calls(), 0);
  });

  it('413 for a declared or streamed body over maxBodyBytes', async () => {
    const t = setUp({ maxBodyBytes: 16 });
    await assertProblem(await t.send({ body: 'x'.repeat(17) }), 413, 'payload_too_large');
    const handle = withIdempotency(
      createIdempotencyMiddleware({
        ledger: createLedger({ store: createMemoryStore() }),
        scopeOf: () => 'a',
        maxBodyBytes: 16,
      }),
      () => assert.fail('must not run'),
    );
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(8));
        controller.close();
      },
    });
    const streamed = new Request('http://api.test/notes', {
      method: 'POST',
      headers: { 'idempotency-key': 'k' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await assertProblem(await handle(streamed), 413, 'payload_too_large');
    assert.equal((await t.send({ body: 'x'.repeat(16) })).status, 201, 'exactly the limit is fine');
  });

  it('422 for the same key with another payload, checked before the in-flight check', async () => {
    const t = setUp();
    await t.send({ body: '{"title":"a"}' });
    await assertProblem(await t.send({ body: '{"title":"b"}' }), 422, 'key_reused');

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    t.setBehaviour(async () => {
      await gate;
      return undefined;
    });
    const slow = t.send({ key: 'key-slow' });
    await new Promise<void>((resolve) => setImmediate(resolve));
    await assertProblem(
      await t.send({ key: 'key-slow', body: '{"title":"other"}' }),
      422,
      'key_reused',
    );
    const busy = await assertProblem(await t.send({ key: 'key-slow' }), 409, 'in_flight');
    assert.ok(busy);
    release();
    assert.equal((await slow).status, 201);
    assert.equal((await t.send({ key: 'key-slow' })).headers.get('idempotent-replayed'), 'true');
  });

  it('409 carries Retry-After: the rest of the lease, in whole seconds', async () => {
    const t = setUp();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    t.setBehaviour(async () => {
      await gate;
      return undefined;
    });
    const slow = t.send();
    await new Promise<void>((resolve) => setImmediate(resolve));
    await t.clock.advance(10_500);
    const busy = await t.send();
    assert.equal(busy.status, 409);
    assert.equal(busy.headers.get('retry-after'), '20');
    release();
    await slow;
  });

  it('503 + Retry-After when the ledger is down, and the handler never runs', async () => {
    const down = new Error('ECONNREFUSED');
    const t = setUp({ unavailableRetryAfterMs: 2500 }, (s) => ({
      ...s,
      get: async () => {
        throw down;
      },
      claim: async () => {
        throw down;
      },
    }));
    const response = await t.send();
    await assertProblem(response, 503, 'ledger_unavailable');
    assert.equal(response.headers.get('retry-after'), '3');
    assert.equal(t.calls(), 0);
    assert.deepEqual(t.errors, [down]);
  });

  it('a handler that throws gets 500; its writes roll back and a retry with the same key runs again', async () => {
    const t = setUp();
    const boom = new Error('boom');
    t.setBehaviour(async () => {
      throw boom;
    });
    await assertProblem(await t.send(), 500, 'internal_error');
    assert.deepEqual(t.memory.entries('notes'), []);
    assert.deepEqual(t.errors, [boom]);
    t.setBehaviour(async () => undefined);
    assert.equal((await t.send()).status, 201);
    assert.equal(t.calls(), 2);
  });

  it('a 5xx from the handler is passed on but not stored: a retry runs again', async () => {
    const t = setUp();
    t.setBehaviour(
      async () => new Response('try later', { status: 503, headers: { 'retry-after': '7' } }),
    );
    const failed = await t.send();
    assert.equal(failed.status, 503);
    assert.equal(failed.headers.get('retry-after'), '7');
    assert.equal(await failed.text(), 'try later');
    assert.deepEqual(t.memory.entries('notes'), [], 'rolled back');
    t.setBehaviour(async () => undefined);
    assert.equal((await t.send()).status, 201);
    assert.equal(t.calls(), 2);
  });

  it('stores a 4xx business answer and replays it; replays a 204 with no body', async () => {
    const t = setUp();
    t.setBehaviour(async () => Response.json({ error: 'version conflict' }, { status: 409 }));
    assert.equal((await t.send({ key: 'k-409' })).status, 409);
    const again = await t.send({ key: 'k-409' });
    assert.equal(again.status, 409);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await again.json(), { error: 'version conflict' });
    t.setBehaviour(async () => new Response(null, { status: 204 }));
    await t.send({ key: 'k-204' });
    const empty = await t.send({ key: 'k-204' });
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
    assert.equal(t.calls(), 2);
  });

  it("scopes keys by caller: bob never gets alice's receipt", async () => {
    const t = setUp();
    await t.send({ token: 'alice' });
    const bob = await t.send({ token: 'bob' });
    assert.equal(bob.headers.get('idempotent-replayed'), null);
    assert.equal(t.calls(), 2);
  });

  it('passes GET (and any method not listed) straight through, without a key or a context', async () => {
    const t = setUp();
    const response = await t.send({ method: 'GET', key: null, token: null });
    assert.equal(await response.text(), 'passed through GET');
    const put = await t.send({ method: 'PUT', key: null });
    assert.equal(await put.text(), 'passed through PUT');
    const custom = setUp({ methods: ['POST', 'PUT'] });
    await assertProblem(await custom.send({ method: 'PUT', key: null }), 400, 'missing_key');
  });

  it('the fingerprint covers method, path with query, and body bytes', async () => {
    const t = setUp();
    await t.send();
    await assertProblem(await t.send({ method: 'PATCH' }), 422, 'key_reused');
  });

  it('validates options once, naming the option', () => {
    const ledger = createLedger({ store: createMemoryStore() });
    const scopeOf = () => 'a';
    const bad: Array<[Partial<IdempotencyOptions<MemoryTx>>, string]> = [
      [{ methods: ['GET'] }, 'methods'],
      [{ methods: [] }, 'methods'],
      [{ maxBodyBytes: -1 }, 'maxBodyBytes'],
      [{ receiptHeaders: ['Set-Cookie'] }, 'receiptHeaders'],
      [{ unavailableRetryAfterMs: 1.5 }, 'unavailableRetryAfterMs'],
      [{ minKeyLength: 0 }, 'minKeyLength'],
      [{ minKeyLength: 256 }, 'minKeyLength'],
      [{ minKeyLength: 8.5 }, 'minKeyLength'],
      [{ payloadOf: 'sentAt' as never }, 'payloadOf'],
      [{ payloadOf: () => 1, fingerprintOf: () => 'f' }, 'payloadOf'],
      [{ onWarning: 'stderr' as never }, 'onWarning'],
    ];
    for (const [options, name] of bad) {
      assert.throws(
        () => createIdempotencyMiddleware({ ledger, scopeOf, ...options }),
        (e) => isInvalidOptionError(e) && e.option === name,
      );
    }
    assert.throws(
      () => createIdempotencyMiddleware({ ledger, scopeOf: 'alice' as never }),
      /invalid option scopeOf/,
    );
  });
});
