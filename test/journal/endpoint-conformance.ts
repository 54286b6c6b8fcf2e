import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { verifyWebhook } from '#oncely/contract/standard-webhooks.js';
import { generateWebhookKeyPair } from '#oncely/contract/webhook-keys.js';
import { VirtualClock, seededRandom } from '#oncely/time/index.js';
import type { JournalFixture } from './journal-conformance.js';
import { turnsUntil } from '../support/turns-until.js';

const START_AT = 1_700_000_000_000;
const URL_A = 'http://receiver.test/a';
const NOTICE = 'http://people.test/notices';
const S1 = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const S2 = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';

interface Step {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

/** A receiver from a script of answers (the last repeats); each call noted with its URL, headers and time. */
function receiver(clock: VirtualClock, script: Step[]) {
  const calls: { url: string; headers: Headers; body: string; at: number }[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    const step = script[Math.min(calls.length, script.length - 1)]!;
    calls.push({
      url: String(url),
      headers: new Headers(init?.headers),
      body: new TextDecoder().decode(init?.body as Uint8Array),
      at: clock.now(),
    });
    return new Response('answer', { status: step.status, headers: step.headers ?? {} });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

export function runEndpointConformance<Tx>(
  name: string,
  open: () => Promise<JournalFixture<Tx>>,
  options: { skip?: string } = {},
): void {
  const setUp =
    (
      fn: (
        store: JournalStore<Tx>,
        clock: VirtualClock,
        journal: ReturnType<typeof createJournal<Tx>>,
      ) => Promise<void>,
    ) =>
    async () => {
      const fixture = await open();
      const clock = new VirtualClock({ startAt: START_AT });
      try {
        await fn(fixture.store, clock, createJournal({ store: fixture.store, clock }));
      } finally {
        await fixture.close();
      }
    };
  const workerOn = (
    store: JournalStore<Tx>,
    clock: VirtualClock,
    fetch: typeof globalThis.fetch,
    owner = 'w1',
  ) =>
    createOutboxWorker({
      store: store as JournalStore<unknown>,
      clock,
      random: seededRandom(1),
      fetch,
      owner,
      disabledNotice: { target: NOTICE },
    });

  describe(`endpoint conformance: ${name}`, options, () => {
    it(
      'adds, lists and changes endpoints; bad input changes nothing; intents take its URL',
      setUp(async (_store, clock, journal) => {
        const added = await journal.endpoints.add({ id: 'a', url: URL_A, secrets: [S1] });
        assert.equal(added.state, 'active');
        await assert.rejects(journal.endpoints.add({ id: 'a', url: URL_A }), /exists already/);
        await assert.rejects(journal.endpoints.add({ id: 'b c', url: URL_A }), /letters, digits/);
        await assert.rejects(journal.endpoints.add({ id: 'b', url: 'ftp://x' }), /http\(s\) URL/);
        await assert.rejects(
          journal.endpoints.add({ id: 'b', url: URL_A, ratePerSecond: 0 }),
          /ratePerSecond/,
        );
        assert.deepEqual(
          (await journal.endpoints.list()).map((e) => e.id),
          ['a'],
        );
        await assert.rejects(journal.endpoints.pause('nope'), /no endpoint "nope"/);
        await assert.rejects(journal.record({ endpoint: 'nope', body: '{}' }), /no endpoint/);
        await assert.rejects(
          journal.record({ endpoint: 'a', target: URL_A, body: '{}' }),
          /either a target or an endpoint/,
        );
        const { intent } = await journal.record({ key: 'k1', endpoint: 'a', body: '{}' });
        assert.equal(intent.endpoint, 'a');
        assert.equal(intent.target, URL_A);
        const paused = await journal.endpoints.pause('a', 'maintenance');
        assert.deepEqual([paused.state, paused.stateReason], ['paused', 'maintenance']);
        assert.equal((await journal.endpoints.disable('a')).state, 'disabled');
        await assert.rejects(journal.endpoints.resume('a'), /disabled; enable it/);
        await assert.rejects(journal.endpoints.pause('a'), /disabled; enable it first/);
        assert.equal((await journal.endpoints.get('a'))?.state, 'disabled');
        assert.equal((await journal.endpoints.enable('a')).state, 'active');
        assert.equal((await journal.endpoints.get('a'))?.stateReason, null);
        assert.equal(clock.now(), START_AT);
      }),
    );

    it(
      'paused or disabled: intents wait unsent, their budget intact; enable delivers them',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 200 }]);
        await journal.endpoints.add({ id: 'a', url: URL_A, secrets: [S1] });
        await journal.endpoints.pause('a');
        await journal.record({ key: 'k1', endpoint: 'a', body: '{}', maxAttempts: 1 });
        const worker = workerOn(store, clock, r.fetch);
        const counts = await worker.resume();
        assert.equal(counts.pending, 1, 'resume() returns: only parked intents are left');
        assert.equal(r.calls.length, 0);
        assert.equal((await journal.get('k1'))?.attemptCount, 0);
        await journal.endpoints.disable('a', 'gone for now');
        await clock.advance(3_600_000);
        await worker.runOnce();
        assert.equal(r.calls.length, 0);
        await assert.rejects(journal.endpoints.resume('a'), /enable it/);
        await worker.runOnce();
        assert.equal(r.calls.length, 0, 'a refused resume wakes nothing');
        await journal.endpoints.enable('a');
        await worker.resume();
        assert.equal((await journal.get('k1'))?.state, 'delivered');
        assert.equal(r.calls.length, 1);
        assert.equal(r.calls[0]!.url, URL_A);
      }),
    );

    it(
      'update edits URL and settings, keeps the rest; bad input changes nothing',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 200 }]);
        await journal.endpoints.add({ id: 'a', url: URL_A, secrets: [S1], ratePerSecond: 5 });
        await journal.record({ key: 'k1', endpoint: 'a', body: '{}' });
        await clock.advance(1000);
        const updated = await journal.endpoints.update('a', {
          url: 'http://receiver.test/b',
          ratePerSecond: null,
          breaker: { minRequests: 3 },
        });
        assert.equal(updated.url, 'http://receiver.test/b');
        assert.equal(updated.settings.ratePerSecond, null);
        assert.equal(updated.settings.breaker.minRequests, 3);
        assert.equal(updated.settings.breaker.failureRatio, 0.5, 'breaker fields merge');
        assert.equal(updated.updatedAt, START_AT + 1000);
        assert.deepEqual(updated.secrets, [{ secret: S1, expiresAt: null }]);
        const before = await journal.endpoints.get('a');
        for (const bad of [
          { url: 'ftp://x' },
          { ratePerSecond: -1 },
          { breaker: { failureRatio: 2 } },
          { secrets: [S2] },
          { id: 'b' },
        ])
          await assert.rejects(journal.endpoints.update('a', bad as never), /invalid option/);
        assert.deepEqual(await journal.endpoints.get('a'), before);
        await assert.rejects(journal.endpoints.update('nope', { ratePerSecond: 1 }), /no endpoint/);
        await workerOn(store, clock, r.fetch).resume();
        assert.deepEqual(
          r.calls.map((c) => c.url),
          ['http://receiver.test/b'],
          'a pending intent goes to the new URL',
        );
      }),
    );

    it(
      'delete cancels its pending intents with the reason; finished ones stay as they were',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 200 }]);
        await journal.endpoints.add({ id: 'a', url: URL_A, secrets: [S1] });
        await journal.endpoints.add({ id: 'b', url: 'http://receiver.test/b', secrets: [S1] });
        await journal.record({ key: 'done', endpoint: 'a', body: '{}' });
        await workerOn(store, clock, r.fetch).resume();
        await journal.endpoints.pause('a');
        await journal.record({ key: 'k1', endpoint: 'a', body: '{}' });
        await journal.record({ key: 'k2', endpoint: 'a', body: '{}' });
        await journal.record({ key: 'other', endpoint: 'b', body: '{}' });
        const { endpoint, cancelled } = await journal.endpoints.delete('a', 'receiver retired');
        assert.equal(endpoint.id, 'a');
        assert.equal(cancelled, 2);
        assert.equal(await journal.endpoints.get('a'), undefined);
        for (const key of ['k1', 'k2']) {
          const intent = await journal.get(key);
          assert.equal(intent?.state, 'cancelled');
          assert.equal(intent?.outcome?.detail, 'receiver retired');
        }
        assert.equal((await journal.get('done'))?.state, 'delivered');
        assert.equal((await journal.get('other'))?.state, 'pending');
        await assert.rejects(journal.endpoints.delete('a'), /no endpoint "a"/);
        await assert.rejects(
          journal.record({ key: 'k3', endpoint: 'a', body: '{}' }),
          /no endpoint/,
        );
      }),
    );

    it('throttle: two workers in one pass take distinct slots 1000/rate apart, sent on time', async () => {
      const fixture = await open();
      const store = fixture.store as JournalStore<unknown>;
      const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
      try {
        const journal = createJournal({ store, clock });
        const r = receiver(clock, [{ status: 200 }]);
        await journal.endpoints.add({ id: 'a', url: URL_A, ratePerSecond: 10 });
        for (let i = 0; i < 12; i++)
          await journal.record({ key: `k${i}`, endpoint: 'a', body: '{}' });
        const worker = (owner: string) =>
          createOutboxWorker({ store, clock, fetch: r.fetch, owner, batchSize: 4 });
        const passes = Promise.all([worker('one').runOnce(), worker('two').runOnce()]);
        // Eight slots: the first is now, the other seven wait on the clock.
        await turnsUntil(() => clock.pendingCount === 7, 100_000);
        await clock.advance(1000);
        await passes;
        const at = r.calls.map((c) => c.at - START_AT);
        assert.deepEqual(at, [0, 100, 200, 300, 400, 500, 600, 700]);
        const health = (await journal.endpoints.get('a'))!.health;
        assert.equal(health.nextSlotAt, START_AT + 800, 'the next free slot');
      } finally {
        await fixture.close();
      }
    });

    it(
      'breaker: closed → open on the failure ratio → half-open lets one probe through → closed',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [
          { status: 503 },
          { status: 503 },
          { status: 503 },
          { status: 503 },
          { status: 503 }, // the first probe fails: open again
          { status: 200 },
        ]);
        const breaker = { minRequests: 4, failureRatio: 0.5, windowMs: 60_000, coolDownMs: 10_000 };
        await journal.endpoints.add({ id: 'a', url: URL_A, breaker });
        for (let i = 0; i < 6; i++)
          await journal.record({ key: `k${i}`, endpoint: 'a', body: '{}', maxAttempts: 20 });
        const worker = createOutboxWorker({
          store: store as JournalStore<unknown>,
          clock,
          random: seededRandom(1),
          fetch: r.fetch,
          batchSize: 4,
        });
        await worker.runOnce();
        assert.equal(r.calls.length, 4);
        assert.equal((await journal.endpoints.get('a'))?.health.breaker, 'open');
        await worker.runOnce(); // the other two: held, not sent, nothing spent
        await clock.advance(5_000);
        await worker.runOnce();
        assert.equal(r.calls.length, 4, 'open: nothing goes out');
        assert.equal((await journal.get('k5'))?.attemptCount, 0);
        await clock.advance(5_000);
        await worker.runOnce();
        assert.equal(r.calls.length, 5, 'half-open: one probe');
        assert.equal((await journal.endpoints.get('a'))?.health.breaker, 'open', 'it failed');
        await clock.advance(10_000);
        const probe = await worker.runOnce();
        assert.equal(probe.sent, 1);
        assert.equal((await journal.endpoints.get('a'))?.health.breaker, 'closed');
        await worker.resume();
        const counts = await journal.counts();
        assert.equal(counts.delivered, 6);
        assert.equal(r.calls.length, 5 + 6, 'every intent delivered once after the outage');
      }),
    );

    it(
      'signals: 410 disables (a notice recorded); abort-message ends the intent; Retry-After defers the endpoint; 429 slows it',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [
          { status: 500, headers: { 'webhook-delivery': 'abort-message' } },
          { status: 503, headers: { 'retry-after': '30' } },
          { status: 429 },
          { status: 410 },
        ]);
        await journal.endpoints.add({ id: 'a', url: URL_A, ratePerSecond: 100 });
        const worker = workerOn(store, clock, r.fetch);
        await journal.record({ key: 'k1', endpoint: 'a', body: '{}', maxAttempts: 5 });
        await worker.runOnce();
        const aborted = await journal.get('k1');
        assert.equal(aborted?.state, 'refused');
        assert.equal(aborted?.attemptCount, 1);
        assert.match(aborted?.outcome?.detail ?? '', /abort-message/);

        await journal.record({ key: 'k2', endpoint: 'a', body: '{}', maxAttempts: 5 });
        await journal.record({ key: 'k3', endpoint: 'a', body: '{}', maxAttempts: 5 });
        await worker.runOnce(); // k2 answered 503 Retry-After: 30 (k3 shares the batch and the slot spacing)
        const deferred = await journal.endpoints.get('a');
        assert.ok(deferred!.health.deferredUntil >= START_AT + 30_000);
        const calls = r.calls.length;
        await clock.advance(20_000);
        await worker.runOnce();
        assert.equal(r.calls.length, calls, 'the whole endpoint waits for Retry-After');
        await clock.advance(15_000);
        await worker.runOnce();
        const slowed = await journal.endpoints.get('a');
        assert.ok(slowed!.health.slowUntil > clock.now(), '429 slows the endpoint');
        await clock.advance(60_000);
        await worker.runOnce();
        const gone = await journal.endpoints.get('a');
        assert.equal(gone?.state, 'disabled');
        assert.match(gone?.stateReason ?? '', /410/);
        const notices = (await journal.list()).filter((i) => i.target === NOTICE);
        assert.equal(notices.length, 1);
        assert.match(new TextDecoder().decode(notices[0]!.body), /"endpoint.disabled"/);
      }),
    );

    it(
      'webhook-delivery: disable disables the endpoint; its other intents wait',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 200, headers: { 'webhook-delivery': 'disable' } }]);
        await journal.endpoints.add({ id: 'a', url: URL_A });
        await journal.record({ key: 'k1', endpoint: 'a', body: '{}' });
        const worker = workerOn(store, clock, r.fetch);
        await worker.runOnce();
        assert.equal((await journal.endpoints.get('a'))?.state, 'disabled');
        await journal.record({ key: 'k2', endpoint: 'a', body: '{}' });
        await worker.runOnce();
        assert.equal(r.calls.filter((c) => c.url === URL_A).length, 1);
        assert.equal((await journal.get('k2'))?.attemptCount, 0);
      }),
    );

    it(
      'auto-disable after only failures for the set time, with a notification intent',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 500 }]);
        await journal.endpoints.add({ id: 'a', url: URL_A, breaker: { minRequests: 1000 } });
        const worker = workerOn(store, clock, r.fetch);
        await journal.record({ key: 'k1', endpoint: 'a', body: '{}', maxAttempts: 1 });
        await worker.runOnce();
        assert.equal((await journal.endpoints.get('a'))?.state, 'active');
        await clock.advance(4 * 86_400_000);
        await journal.record({ key: 'k2', endpoint: 'a', body: '{}', maxAttempts: 1 });
        await worker.runOnce();
        assert.equal((await journal.endpoints.get('a'))?.state, 'active', 'four days: not yet');
        await clock.advance(86_400_000);
        await journal.record({ key: 'k3', endpoint: 'a', body: '{}', maxAttempts: 1 });
        await worker.runOnce();
        const disabled = await journal.endpoints.get('a');
        assert.equal(disabled?.state, 'disabled');
        assert.match(disabled?.stateReason ?? '', /only failures since/);
        const notice = (await journal.list()).find((i) => i.target === NOTICE);
        assert.ok(notice, 'a notification intent');
        assert.equal(notice.key, `endpoint-disabled.a.${clock.now()}`);
      }),
    );

    it(
      'v1a: a whsk_ secret key signs, the receiver verifies with the whpk_ public key alone',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 200 }]);
        const { secretKey, publicKey } = generateWebhookKeyPair();
        await journal.endpoints.add({ id: 'a', url: URL_A, secrets: [secretKey] });
        for (const bad of [publicKey, 'whsk_short', 'hello'])
          await assert.rejects(
            journal.endpoints.add({ id: 'b', url: URL_A, secrets: [bad] }),
            (error: Error) =>
              /invalid option secret/.test(error.message) && !error.message.includes(bad),
          );
        await assert.rejects(
          journal.endpoints.rotateSecret('a', { secret: publicKey }),
          /invalid option secret/,
        );
        await journal.record({ key: 'k1', endpoint: 'a', body: '{"n":1}' });
        await workerOn(store, clock, r.fetch).runOnce();
        const sent = r.calls[0]!;
        assert.match(sent.headers.get('webhook-signature') ?? '', /^v1a,/);
        assert.equal(verifyWebhook([publicKey], sent.headers, sent.body, clock.now()).ok, true);
      }),
    );

    it(
      'rotation: signed by both secrets during the overlap, by the new one only after',
      setUp(async (store, clock, journal) => {
        const r = receiver(clock, [{ status: 200 }]);
        await journal.endpoints.add({ id: 'a', url: URL_A, secrets: [S1] });
        await journal.endpoints.rotateSecret('a', { secret: S2, overlapMs: 60_000 });
        const worker = workerOn(store, clock, r.fetch);
        await journal.record({ key: 'k1', endpoint: 'a', body: '{"n":1}' });
        await worker.runOnce();
        const during = r.calls[0]!;
        assert.equal(during.headers.get('webhook-signature')!.split(' ').length, 2);
        for (const secret of [S1, S2])
          assert.equal(verifyWebhook([secret], during.headers, during.body, clock.now()).ok, true);
        await clock.advance(60_000);
        await journal.record({ key: 'k2', endpoint: 'a', body: '{"n":2}' });
        await worker.runOnce();
        const after = r.calls[1]!;
        assert.equal(after.headers.get('webhook-signature')!.split(' ').length, 1);
        assert.equal(verifyWebhook([S2], after.headers, after.body, clock.now()).ok, true);
        assert.equal(verifyWebhook([S1], after.headers, after.body, clock.now()).ok, false);
        assert.equal(
          (await journal.endpoints.get('a'))?.secrets.length,
          2,
          'expired, still listed',
        );
      }),
    );
  });
}
