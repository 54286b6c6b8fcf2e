import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HookHit } from '#cli/receivers/hook/hook-service.js';
import { openHookService } from '../../support/open-hook-service.js';
import { createHookService } from '#cli/receivers/hook/hook-service.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { parseHttpDate } from '#oncely/contract/retry-after.js';
import { sha256Hex } from '#oncely/contract/fingerprint.js';

const BASE = 'http://hook.test';
const post = (path: string, body: string, key?: string): Request =>
  new Request(`${BASE}${path}`, {
    method: 'POST',
    body,
    headers: key === undefined ? {} : { 'Idempotency-Key': key },
  });

test('records every arrival: time from the injected clock, method, path, key and body hash', async () => {
  const clock = new VirtualClock({ startAt: 5000 });
  const hook = await openHookService({ script: '429@1x2,200', clock });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    statuses.push((await hook.handle(post('/hooks/run-complete', '{"run":9}', 'run-9'))).status);
    await clock.sleep(1000);
  }
  assert.deepEqual(statuses, [429, 429, 200]);
  const hits = await hook.hits();
  assert.deepEqual(
    hits.map((h) => h.at),
    [5000, 6000, 7000],
  );
  assert.deepEqual(
    hits.map((h) => h.answer),
    ['rejected', 'rejected', 'completed'],
  );
  assert.deepEqual(
    hits.map((h) => h.retryAfter),
    ['1', '1', undefined],
  );
  assert.ok(
    hits.every((h) => h.method === 'POST' && h.path === '/hooks/run-complete' && h.key === 'run-9'),
  );
  assert.ok(hits.every((h) => h.bodySha256 === sha256Hex('{"run":9}')));
  assert.deepEqual(await hook.counts(), { arrivals: 3, completions: 1, replays: 0 });
});

test('a 429 carries Retry-After and a problem+json body', async () => {
  const hook = await openHookService({ script: '429@3', clock: new VirtualClock() });
  const res = await hook.handle(post('/x', '{}'));
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '3');
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(((await res.json()) as { status: number }).status, 429);
});

test('a repeated key after a success is a replay, not a second completion; a new body under it is 422', async () => {
  const hook = await openHookService({ script: '200', clock: new VirtualClock() });
  const first = await hook.handle(post('/h', '{"a":1}', 'k1'));
  const again = await hook.handle(post('/h', '{"a":1}', 'k1'));
  assert.equal(first.headers.get('idempotent-replayed'), null);
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(await again.text(), await first.text());
  const reused = await hook.handle(post('/h', '{"a":2}', 'k1'));
  assert.equal(reused.status, 422);
  // Without a key the receiver cannot tell a retry from a new intent: two completions.
  await hook.handle(post('/h', '{"a":1}'));
  await hook.handle(post('/h', '{"a":1}'));
  assert.deepEqual(
    (await hook.hits()).map((h) => h.answer),
    ['completed', 'replayed', 'key_reused', 'completed', 'completed'],
  );
  assert.deepEqual(await hook.counts(), { arrivals: 5, completions: 3, replays: 1 });
});

test('a failed attempt under a key is not remembered: the retry consumes the script again', async () => {
  const hook = await openHookService({ script: '503,200', clock: new VirtualClock() });
  assert.equal((await hook.handle(post('/h', 'x', 'k'))).status, 503);
  const res = await hook.handle(post('/h', 'x', 'k'));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('idempotent-replayed'), null);
});

test('swallow records the completion, then drops the connection through the control it is given', async () => {
  const hook = await openHookService({ script: 'swallow,200', clock: new VirtualClock() });
  let dropped = 0;
  await hook.handle(post('/h', 'x', 'k'), { drop: () => dropped++ });
  assert.equal(dropped, 1);
  const replay = await hook.handle(post('/h', 'x', 'k'), { drop: () => dropped++ });
  assert.equal(dropped, 1);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(await hook.counts(), { arrivals: 2, completions: 1, replays: 1 });
});

test('swallow without a connection control breaks the reply mid-body', async () => {
  const hook = await openHookService({ script: 'swallow', clock: new VirtualClock() });
  const res = await hook.handle(post('/h', 'x'));
  await assert.rejects(res.text(), /swallowed/);
  assert.equal((await hook.hits())[0]?.status, null);
});

test('a malformed key is refused with 400 and recorded', async () => {
  const hook = await openHookService({ clock: new VirtualClock() });
  const res = await hook.handle(post('/h', 'x', '   '));
  assert.equal(res.status, 400);
  assert.match(await res.text(), /empty idempotency key/);
  assert.equal((await hook.hits())[0]?.answer, 'key_invalid');
});

/** A body of `chunks` chunks of `size` bytes, produced on demand: counts what the receiver pulled. */
function meteredBody(chunks: number, size: number) {
  const meter = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (meter.pulled === chunks) return controller.close();
      meter.pulled++;
      controller.enqueue(new Uint8Array(size).fill(0x78));
    },
    cancel() {
      meter.cancelled = true;
    },
  });
  return { meter, stream };
}

test('a body over maxBodyBytes is refused with 413 problem+json while reading, never buffered in full', async () => {
  const hook = await openHookService({
    script: '200',
    clock: new VirtualClock(),
    maxBodyBytes: 1024,
  });
  // 4 MiB offered in 1 KiB chunks: the receiver stops at the second one, past the limit.
  const { meter, stream } = meteredBody(4096, 1024);
  const res = await hook.handle(
    new Request(`${BASE}/hooks/big`, {
      method: 'POST',
      headers: { 'idempotency-key': 'big-1' },
      body: stream,
      duplex: 'half',
    } as RequestInit),
  );
  assert.equal(res.status, 413);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  const problem = (await res.json()) as { status: number; detail: string; maxBodyBytes: number };
  assert.equal(problem.status, 413);
  assert.equal(problem.maxBodyBytes, 1024);
  assert.match(problem.detail, /exceeds 1024 bytes/);
  assert.ok(meter.pulled <= 3, `pulled ${meter.pulled} of 4096 chunks`);
  assert.equal(meter.cancelled, true, 'the rest of the body is cancelled, not drained');

  // A declared Content-Length over the limit is refused before a byte is read.
  const declared = meteredBody(4096, 1024);
  const refused = await hook.handle(
    new Request(`${BASE}/hooks/big`, {
      method: 'POST',
      headers: { 'content-length': String(4096 * 1024) },
      body: declared.stream,
      duplex: 'half',
    } as RequestInit),
  );
  assert.equal(refused.status, 413);
  assert.equal(declared.meter.pulled <= 1, true, `pulled ${declared.meter.pulled}`);

  // Recorded as too_large, with no body hash (the body was never read), and no work done.
  assert.deepEqual(
    (await hook.hits()).map((h) => [h.answer, h.status, h.bodySha256]),
    [
      ['too_large', 413, null],
      ['too_large', 413, null],
    ],
  );
  assert.deepEqual(await hook.counts(), { arrivals: 2, completions: 0, replays: 0 });
  // Exactly the limit is accepted, and the key was not pinned by the refusal.
  const exact = meteredBody(1, 1024);
  const ok = await hook.handle(
    new Request(`${BASE}/hooks/big`, {
      method: 'POST',
      headers: { 'idempotency-key': 'big-1' },
      body: exact.stream,
      duplex: 'half',
    } as RequestInit),
  );
  assert.equal(ok.status, 200);
  assert.equal((await hook.hits())[2]?.bodySha256, sha256Hex('x'.repeat(1024)));
});

test('GET /debug/hits returns structured JSON; reset clears hits and script position, not keys', async () => {
  const hook = await openHookService({
    script: '429,200',
    clock: new VirtualClock(),
    basePath: '/hooks',
  });
  await hook.handle(post('/hooks/run', 'x', 'k'));
  await hook.handle(post('/hooks/run', 'x', 'k'));
  const res = await hook.handle(new Request(`${BASE}/hooks/debug/hits`));
  assert.equal(res.status, 200);
  const body = (await res.json()) as {
    script: string;
    arrivals: number;
    completions: number;
    hits: HookHit[];
  };
  assert.equal(body.script, '429,200');
  assert.equal(body.arrivals, 2);
  assert.equal(body.completions, 1);
  assert.deepEqual(
    body.hits.map((h) => h.status),
    [429, 200],
  );

  assert.equal(
    (await hook.handle(new Request(`${BASE}/hooks/debug/reset`, { method: 'POST' }))).status,
    204,
  );
  assert.equal((await hook.hits()).length, 0);
  // The script starts over: 429 again for a new key; the acked key lives in the ledger and replays.
  assert.equal((await hook.handle(post('/hooks/run', 'x', 'k2'))).status, 429);
  assert.equal(
    (await hook.handle(post('/hooks/run', 'x', 'k'))).headers.get('idempotent-replayed'),
    'true',
  );
  assert.equal(
    (await hook.handle(new Request(`${BASE}/hooks/debug/hits`, { method: 'DELETE' }))).status,
    204,
  );
  assert.equal((await hook.hits()).length, 0);
  assert.equal((await hook.handle(new Request(`${BASE}/hooks/debug/reset`))).status, 405);
});

test('Retry-After as an HTTP-date is measured from the receiver clock, matching its Date header', async () => {
  const clock = new VirtualClock({ startAt: Date.UTC(2026, 8, 14, 12, 0, 0, 400) });
  const hook = await openHookService({ script: '503@2', clock, retryAfterFormat: 'http-date' });
  const res = await hook.handle(post('/h', 'x'));
  const retryAt = parseHttpDate(res.headers.get('retry-after') ?? '');
  const dateAt = parseHttpDate(res.headers.get('date') ?? '');
  assert.equal(res.headers.get('retry-after'), 'Mon, 14 Sep 2026 12:00:02 GMT');
  assert.equal(retryAt! - dateAt!, 2000);
});

test('options are checked once, naming the option', async () => {
  await assert.rejects(openHookService({ script: '999' }), /invalid option script/);
  await assert.rejects(
    // @ts-expect-error a format outside the closed set
    openHookService({ retryAfterFormat: 'minutes' }),
    /invalid option retryAfterFormat/,
  );
  await assert.rejects(openHookService({ basePath: 'hooks' }), /invalid option basePath/);
  // @ts-expect-error no ledger
  assert.throws(() => createHookService({ db: {} }), /invalid option ledger/);
});
