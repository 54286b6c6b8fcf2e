import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import type { VirtualClock } from '#oncely/time/index.js';

/** A fetch answering by URL: a status, or 'throw' (a reset after the request left). Counts calls. */
export function routedFetch(routes: Readonly<Record<string, number | 'throw'>>, fallback = 200) {
  const calls: { url: string; key: string | null }[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    const href = String(url);
    calls.push({ url: href, key: new Headers(init?.headers).get('idempotency-key') });
    const step = routes[href] ?? fallback;
    if (step === 'throw')
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      });
    return new Response(step === 200 ? '{"ok":true}' : 'no', { status: step });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

export const SEED_TARGETS = {
  refused: 'http://a.test/orders/1',
  gaveUp: 'http://a.test/orders/2',
  unknown: 'http://b.test/hooks',
  delivered: 'http://a.test/orders/3',
  pending: 'http://a.test/orders/4',
} as const;

/**
 * One intent in each state, a second apart, in this order: r1 refused (400) at t, g1 gave_up (503,
 * one attempt) at t+1s, u1 unknown (reset, one attempt) at t+2s, d1 delivered at t+3s, c1
 * cancelled at t+3s (same target as u1), p1 pending. Returns t.
 */
export async function seedDeadLetters(
  store: JournalStore<unknown>,
  clock: VirtualClock,
): Promise<number> {
  const journal = createJournal({ store, clock });
  const { fetch } = routedFetch({
    [SEED_TARGETS.refused]: 400,
    [SEED_TARGETS.gaveUp]: 503,
    [SEED_TARGETS.unknown]: 'throw',
  });
  const worker = createOutboxWorker({ store, clock, fetch, owner: 'seed' });
  const start = clock.now();
  const steps: [string, string][] = [
    ['r1', SEED_TARGETS.refused],
    ['g1', SEED_TARGETS.gaveUp],
    ['u1', SEED_TARGETS.unknown],
    ['d1', SEED_TARGETS.delivered],
  ];
  for (const [index, [key, target]] of steps.entries()) {
    if (index > 0) await clock.advance(1000);
    await journal.record({ key, target, body: `{"key":"${key}"}`, maxAttempts: 1 });
    await worker.resume();
  }
  await journal.record({ key: 'c1', target: SEED_TARGETS.unknown, body: '{}' });
  await journal.cancel('c1', 'not needed');
  await journal.record({ key: 'p1', target: SEED_TARGETS.pending, body: '{}' });
  return start;
}
