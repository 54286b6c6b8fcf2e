// A request nobody will hear the answer to rolls back: when its Request is aborted while the
// handler runs (the client left, or the server answered for it: a 408, a shutdown's 503), the
// effect and the receipt do not commit, the key is free again, and a retry runs the work anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdempotencyMiddleware, withIdempotency } from '#oncely/http/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore, type MemoryTx } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';

test('an abort while the handler runs rolls its effect and receipt back; the retry runs again', async () => {
  const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
  const store = createMemoryStore();
  const ledger = createLedger<MemoryTx>({ store, clock });
  const errors: unknown[] = [];
  const middleware = createIdempotencyMiddleware<MemoryTx>({
    ledger,
    scopeOf: () => 'alice',
    onError: (error) => errors.push(error),
  });
  let release = (): void => {};
  let entered = (): void => {};
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  let runs = 0;
  const handle = withIdempotency(middleware, async (_request, context) => {
    runs++;
    context!.tx.set('notes', 'alice/n1', `run ${runs}`);
    if (runs === 1) {
      entered();
      await new Promise<void>((resolve) => (release = resolve));
    }
    return Response.json({ run: runs }, { status: 201 });
  });
  const post = (signal?: AbortSignal): Promise<Response> =>
    handle(
      new Request('http://api.test/notes', {
        method: 'POST',
        headers: { 'idempotency-key': 'k1' },
        body: '{}',
        ...(signal ? { signal } : {}),
      }),
    );

  const aborter = new AbortController();
  const first = post(aborter.signal);
  await inHandler;
  aborter.abort(new Error('answered 503 by the server'));
  release();
  assert.equal((await first).status, 500, 'the answer nobody hears is a rollback');
  assert.deepEqual(errors, [], 'a request cut on purpose is not reported as a failure');
  assert.equal(
    (await ledger.lookup('alice', 'k1')).kind,
    'never_seen',
    'no receipt, and the key is free',
  );

  const retry = await post();
  assert.equal(retry.status, 201);
  assert.deepEqual(
    await retry.json(),
    { run: 2 },
    'the retry ran the work again: the first run left nothing',
  );
  assert.equal((await post()).headers.get('idempotent-replayed'), 'true');
});
