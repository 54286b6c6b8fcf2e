import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signWebhook } from '#oncely/contract/standard-webhooks.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { openHookService } from '../../support/open-hook-service.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const START_AT = 1_700_000_000_000;
const BODY = '{"run_id":"run-9"}';
const signed = (headers: Record<string, string>, body = BODY) =>
  new Request('http://hook.test/hooks/run-complete', { method: 'POST', headers, body });

test('a signed hook: webhook-id is the idempotency key, a retry with a fresh timestamp and signature replays', async () => {
  const clock = new VirtualClock({ startAt: START_AT });
  const hook = await openHookService({ clock, webhookSecrets: [SECRET] });
  const first = await hook.handle(signed(signWebhook(SECRET, 'msg-1', clock.now(), BODY)));
  assert.equal(first.status, 200);
  await clock.sleep(30_000);
  const retry = await hook.handle(signed(signWebhook(SECRET, 'msg-1', clock.now(), BODY)));
  assert.equal(retry.status, 200);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  const hits = await hook.hits();
  assert.deepEqual(
    hits.map((h) => [h.key, h.answer]),
    [
      ['msg-1', 'completed'],
      ['msg-1', 'replayed'],
    ],
  );
  assert.deepEqual(await hook.counts(), { arrivals: 2, completions: 1, replays: 1 });
});

test('a tampered body, a wrong secret, an old timestamp and a missing header each get 401 problem+json and change nothing', async () => {
  const clock = new VirtualClock({ startAt: START_AT });
  const hook = await openHookService({ clock, webhookSecrets: [SECRET] });
  const good = signWebhook(SECRET, 'msg-2', clock.now(), BODY);
  const { 'webhook-signature': _sig, ...unsignedHeaders } = good;
  const cases: Array<[string, Request]> = [
    ['tampered body', signed(good, '{"run_id":"run-666"}')],
    ['wrong secret', signed(signWebhook('whsec_bm90IHRoZSBzZWNyZXQ=', 'msg-2', clock.now(), BODY))],
    ['old timestamp', signed(signWebhook(SECRET, 'msg-2', clock.now() - 6 * 60_000, BODY))],
    ['missing header', signed(unsignedHeaders)],
  ];
  for (const [name, request] of cases) {
    const response = await hook.handle(request);
    assert.equal(response.status, 401, name);
    assert.equal(response.headers.get('content-type'), 'application/problem+json', name);
    assert.ok(response.headers.get('www-authenticate'), `${name}: a 401 carries a challenge`);
    assert.match(
      ((await response.json()) as { detail: string }).detail,
      /webhook signature refused/,
      name,
    );
  }
  assert.deepEqual(
    await hook.counts(),
    { arrivals: 0, completions: 0, replays: 0 },
    'no hit, no completion',
  );
  // Nothing was claimed either: the genuine delivery under the same id is the first, not a replay.
  const genuine = await hook.handle(signed(good));
  assert.equal(genuine.status, 200);
  assert.equal(genuine.headers.get('idempotent-replayed'), null);
  assert.deepEqual(await hook.counts(), { arrivals: 1, completions: 1, replays: 0 });
});

test('Idempotency-Key and webhook-id naming different keys is refused', async () => {
  const clock = new VirtualClock({ startAt: START_AT });
  const hook = await openHookService({ clock, webhookSecrets: [SECRET] });
  const response = await hook.handle(
    signed({ ...signWebhook(SECRET, 'msg-3', clock.now(), BODY), 'idempotency-key': 'other' }),
  );
  assert.equal(response.status, 400);
  assert.deepEqual(await hook.counts(), { arrivals: 0, completions: 0, replays: 0 });
});

test('the outbox worker signs every attempt; the signed hook receiver accepts them and keys them by webhook-id', async () => {
  const clock = new VirtualClock({ startAt: START_AT });
  const hook = await openHookService({
    clock,
    webhookSecrets: ['whsec_bm90IHRoZSBzZWNyZXQ=', SECRET],
    script: '503x1,200',
  });
  const { createJournal, createOutboxWorker } = await import('#oncely/journal/index.js');
  const { createMemoryJournalStore } = await import('#oncely/stores/memory/index.js');
  const store = createMemoryJournalStore();
  await createJournal({ store, clock }).record({
    key: 'evt-1',
    target: 'http://hook.test/hooks/run-complete',
    body: BODY,
    maxAttempts: 3,
  });
  const signatures: string[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    const request = new Request(url, init);
    signatures.push(
      `${request.headers.get('webhook-id')} ${request.headers.get('webhook-timestamp')}`,
    );
    return hook.handle(request);
  }) as typeof globalThis.fetch;
  const counts = await createOutboxWorker({ store, clock, fetch, signingSecret: SECRET }).resume();
  assert.equal(counts.delivered, 1);
  assert.equal(signatures.length, 2);
  assert.ok(
    signatures.every((s) => s.startsWith('evt-1 ')),
    'webhook-id is the key on every attempt',
  );
  assert.deepEqual(
    (await hook.hits()).map((h) => [h.key, h.answer]),
    [
      ['evt-1', 'rejected'],
      ['evt-1', 'completed'],
    ],
  );
});
