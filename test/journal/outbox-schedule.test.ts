import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { seededRandom } from '#oncely/time/random.js';

// the outbox's defaults keep a message through a long outage and
// obey a long Retry-After. Before them an intent had 3 attempts over about a second, and a
// Retry-After over 30 s ended it `retry_after_too_long`. Time is a VirtualClock: nothing sleeps.

const START = Date.UTC(2026, 11, 7, 9, 0, 0);
const HOUR = 3_600_000;

/** A receiver that answers `down(now)` while it is down, then 200; every arrival is kept. */
function receiver(clock: VirtualClock, down: (nowMs: number, n: number) => Response | undefined) {
  const arrivals: { key: string; at: number; ok: boolean }[] = [];
  const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
    const key = new Headers(init?.headers).get('idempotency-key') ?? '';
    const answer =
      down(clock.now(), arrivals.length) ?? new Response('{"ok":true}', { status: 200 });
    arrivals.push({ key, at: clock.now(), ok: answer.status === 200 });
    return answer;
  }) as typeof globalThis.fetch;
  return { fetch, arrivals };
}

async function setUp(down: (nowMs: number, n: number) => Response | undefined) {
  const clock = new VirtualClock({ startAt: START });
  const store = createMemoryJournalStore();
  const journal = createJournal({ store, clock });
  await journal.endpoints.add({ id: 'shop', url: 'http://shop.test/hooks' });
  const { fetch, arrivals } = receiver(clock, down);
  const worker = createOutboxWorker({
    store,
    clock,
    fetch,
    random: seededRandom(41),
    pollMs: HOUR,
  });
  return { clock, journal, worker, arrivals };
}

test('an endpoint down for 20 hours gets every message once it returns, with no dead letter', async () => {
  const { clock, journal, worker, arrivals } = await setUp((nowMs) =>
    nowMs < START + 20 * HOUR ? new Response('down', { status: 503 }) : undefined,
  );
  const keys = Array.from({ length: 20 }, (_, i) => `order-${i}`);
  for (const key of keys) await journal.record({ key, endpoint: 'shop', body: `{"n":"${key}"}` });

  const counts = await worker.resume();

  assert.equal(counts.delivered, keys.length, JSON.stringify(counts));
  assert.equal(counts.pending + counts.gave_up + counts.unknown + counts.refused, 0);
  const delivered = arrivals.filter((a) => a.ok);
  assert.deepEqual(delivered.map((a) => a.key).sort(), [...keys].sort(), 'each message once');
  assert.ok(delivered.every((a) => a.at >= START + 20 * HOUR));
  for (const key of keys)
    assert.ok(arrivals.filter((a) => a.key === key).length <= 8, `${key} within its 8 attempts`);
  assert.ok(clock.now() - START < 31 * HOUR, 'within the schedule (27.5 h), jitter and all');
});

test('a Retry-After of 7200 is obeyed to the second; the hold and the next attempt are one instant', async () => {
  const { clock, journal, worker, arrivals } = await setUp((_nowMs, n) =>
    n === 0 ? new Response('busy', { status: 503, headers: { 'retry-after': '7200' } }) : undefined,
  );
  await journal.record({ key: 'order-1', endpoint: 'shop', body: '{}' });

  await worker.runOnce();
  const waiting = await journal.get('order-1');
  const endpoint = await journal.endpoints.get('shop');
  assert.equal(waiting?.state, 'pending', 'it waits, it does not die');
  assert.equal(waiting?.nextAttemptAt, arrivals[0]!.at + 7_200_000);
  assert.equal(endpoint?.health.deferredUntil, waiting?.nextAttemptAt);

  // A message recorded meanwhile waits for the same instant, with no attempt spent.
  await journal.record({ key: 'order-2', endpoint: 'shop', body: '{}' });
  await worker.runOnce();
  const held = await journal.get('order-2');
  assert.equal(held?.attemptCount, 0);
  assert.equal(held?.nextAttemptAt, waiting?.nextAttemptAt);

  const counts = await worker.resume();
  assert.equal(counts.delivered, 2);
  assert.deepEqual(
    arrivals.map((a) => a.at - START),
    [0, 7_200_000, 7_200_000],
    'both at 2 h to the millisecond',
  );
  assert.equal(clock.now(), START + 7_200_000);
});
