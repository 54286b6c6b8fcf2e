import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createJournal,
  createOutboxWorker,
  type OutboxDeliver,
  type OutboxDelivery,
  type OutboxDeliveryAnswer,
} from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { seededRandom } from '#oncely/time/random.js';
import { InvalidOptionError } from '#oncely/contract/errors.js';
import { generateWebhookSecret, verifyWebhook } from '#oncely/contract/index.js';

// The worker's `deliver` hook replaces the HTTP request and nothing else: an answer from it is
// settled as the same answer over HTTP, a throw is no answer (the work may have happened).

const START = Date.UTC(2026, 11, 7, 9, 0, 0);

/** A worker on its own memory journal, every clock virtual, sending through `send`. */
function setUp(send: { fetch: typeof fetch } | { deliver: OutboxDeliver }, extra = {}) {
  const clock = new VirtualClock({ startAt: START });
  const store = createMemoryJournalStore();
  const journal = createJournal({ store, clock });
  const worker = createOutboxWorker({
    store,
    clock,
    // Attempt timeouts fire only when a test moves this one (the clock moves itself on a sleep).
    timer: new VirtualClock({ startAt: START, autoAdvance: false }),
    random: seededRandom(7),
    owner: 'w',
    pollMs: 60_000,
    ...send,
    ...extra,
  });
  return { clock, store, journal, worker };
}

/** The same answers over HTTP (a Response each) and from the hook, in order, then 200s. */
function bothWays(answers: readonly OutboxDeliveryAnswer[]) {
  let viaFetch = 0;
  let viaHook = 0;
  const fetch = (async () => {
    const a = answers[viaFetch++] ?? { status: 200 };
    // undici refuses a status out of 200..599 as a network error.
    if (a.status < 200 || a.status > 599)
      throw new TypeError('fetch failed', {
        cause: new Error(`invalid response status ${a.status}`),
      });
    // Bytes, not text: a text body would add a content-type the hook's answer does not have.
    const body = typeof a.body === 'string' ? new TextEncoder().encode(a.body) : a.body;
    return new Response((body ?? null) as BodyInit | null, {
      status: a.status,
      headers: a.headers ?? {},
    });
  }) as typeof globalThis.fetch;
  const deliver: OutboxDeliver = async () => answers[viaHook++] ?? { status: 200 };
  return [setUp({ fetch }), setUp({ deliver })];
}

/** Answers in order (200s after them), and the state and attempt count they end in. */
const SCENARIOS: Record<string, [readonly OutboxDeliveryAnswer[], string, number]> = {
  'a 200 with a receipt and headers': [
    [{ status: 200, headers: { 'x-receipt': 'r-1' }, body: '{"ok":true}' }],
    'delivered',
    1,
  ],
  'a 204': [[{ status: 204 }], 'delivered', 1],
  '503 with Retry-After, then 200': [
    [{ status: 503, headers: { 'Retry-After': '30' } }],
    'delivered',
    2,
  ],
  'a 400 refuses': [[{ status: 400, body: 'no' }], 'refused', 1],
  'an unlisted 302 refuses': [
    [{ status: 302, headers: { location: 'http://elsewhere.test/' } }],
    'refused',
    1,
  ],
  'a 503 asking to abort the message': [
    [{ status: 503, headers: { 'webhook-delivery': 'abort-message' } }],
    'refused',
    1,
  ],
  'three 500s, then 200': [[{ status: 500 }, { status: 500 }, { status: 500 }], 'delivered', 4],
  'a status fetch refuses': [[{ status: 99 }], 'refused', 1],
};

for (const [name, [answers, state, attemptCount]] of Object.entries(SCENARIOS)) {
  test(`${name}: settled from the hook as over HTTP`, async () => {
    const states = [];
    for (const { clock, store, journal, worker } of bothWays(answers)) {
      await journal.record({ key: 'order-1', target: 'http://shop.test/hooks', body: '{"n":1}' });
      for (let pass = 0; pass < 10; pass++) {
        await worker.runOnce();
        const intent = await journal.get('order-1');
        if (intent?.state !== 'pending') break;
        await clock.advanceTo(intent.nextAttemptAt);
      }
      states.push({
        intent: await journal.get('order-1'),
        attempts: await store.attempts('order-1'),
      });
    }
    assert.equal(states[1]!.intent?.state, state);
    assert.equal(states[1]!.attempts.length, attemptCount);
    assert.deepEqual(states[1], states[0]);
  });
}

test('a throw is no answer: retried under the same key, unknown once the budget is spent', async () => {
  const seen: OutboxDelivery[] = [];
  const { store, journal, worker } = setUp({
    deliver: async (delivery) => {
      seen.push(delivery);
      throw new Error('queue unavailable');
    },
  });
  await journal.record({ key: 'order-1', target: 'http://queue.test/orders', maxAttempts: 3 });

  const counts = await worker.resume();

  assert.equal(counts.unknown, 1, JSON.stringify(counts));
  assert.deepEqual(
    seen.map((d) => [d.key, d.attempt, d.headers['idempotency-key']]),
    [1, 2, 3].map((n) => ['order-1', n, 'order-1']),
  );
  const attempts = await store.attempts('order-1');
  assert.deepEqual(
    attempts.map((a) => a.outcome),
    ['unknown', 'unknown', 'unknown'],
  );
  assert.match(attempts[0]!.detail ?? '', /queue unavailable/);
  assert.equal(attempts[0]!.status, null, 'no status was invented');
});

test('a connection refused was not sent: retried, and the intent is delivered, not unknown', async () => {
  let calls = 0;
  const { store, journal, worker } = setUp({
    deliver: async () => {
      if (calls++ === 0)
        throw Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' });
      return { status: 200 };
    },
  });
  await journal.record({ key: 'order-1', target: 'http://shop.test/hooks' });
  await worker.resume();
  const intent = await journal.get('order-1');
  assert.equal(intent?.state, 'delivered');
  assert.equal(intent?.sawUnknown, false);
  assert.deepEqual(
    (await store.attempts('order-1')).map((a) => a.outcome),
    ['retry', 'ok'],
  );
});

test('a hook that never answers times out at the attempt limit; its late answer is ignored', async () => {
  const timer = new VirtualClock({ startAt: START, autoAdvance: false });
  let answer: ((a: OutboxDeliveryAnswer) => void) | undefined;
  const { store, journal, worker } = setUp(
    { deliver: () => new Promise<OutboxDeliveryAnswer>((resolve) => (answer = resolve)) },
    { timer },
  );
  await journal.record({ key: 'order-1', target: 'http://shop.test/', attemptTimeoutMs: 500 });
  const pass = worker.runOnce();
  await timer.advance(499);
  assert.equal((await store.attempts('order-1'))[0]?.outcome, null, 'still in flight');
  await timer.advance(1);
  await pass;
  answer!({ status: 200 });
  const [attempt] = await store.attempts('order-1');
  assert.equal(attempt?.outcome, 'unknown');
  assert.match(attempt?.detail ?? '', /timed out after 500 ms/);
  assert.equal((await journal.get('order-1'))?.state, 'pending');
});

test('the hook is handed the request as it would go out: keyed, signed, to the endpoint URL', async () => {
  const secret = generateWebhookSecret();
  const seen: OutboxDelivery[] = [];
  const { clock, journal, worker } = setUp(
    {
      deliver: async (d: OutboxDelivery) => {
        seen.push(d);
        return { status: 200 };
      },
    },
    { signingSecret: generateWebhookSecret() },
  );
  await journal.endpoints.add({ id: 'shop', url: 'https://shop.test/hooks', secrets: [secret] });
  await journal.record({
    key: 'order-1',
    endpoint: 'shop',
    headers: { 'content-type': 'application/json' },
    body: '{"n":1}',
  });
  await worker.runOnce();

  const [delivery] = seen;
  assert.equal(delivery?.target, 'https://shop.test/hooks');
  assert.equal(delivery?.method, 'POST');
  assert.equal(new TextDecoder().decode(delivery?.body ?? undefined), '{"n":1}');
  assert.equal(delivery?.headers['idempotency-key'], 'order-1');
  assert.equal(delivery?.headers['content-type'], 'application/json');
  const verified = verifyWebhook([secret], { ...delivery!.headers }, '{"n":1}', clock.now());
  assert.equal(verified.ok, true, 'signed with the endpoint secret as over HTTP');
  assert.equal(delivery?.headers['webhook-id'], 'order-1');
  assert.equal((await journal.get('order-1'))?.state, 'delivered');
});

test('deliver is refused beside fetch, or when it is not a function', () => {
  const store = createMemoryJournalStore();
  const deliver: OutboxDeliver = async () => ({ status: 200 });
  assert.throws(
    () => createOutboxWorker({ store, deliver, fetch: globalThis.fetch }),
    InvalidOptionError,
  );
  assert.throws(
    () => createOutboxWorker({ store, deliver: 'http' as unknown as OutboxDeliver }),
    InvalidOptionError,
  );
});
