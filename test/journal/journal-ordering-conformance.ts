import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createJournal,
  createOutboxWorker,
  type ClaimedIntent,
  type JournalStore,
  type Settlement,
} from '#oncely/journal/index.js';
import { VirtualClock, seededRandom } from '#oncely/time/index.js';
import { createFifoReceiver, fifoFetch } from '../../bench/fifo-receiver.js';
import type { JournalFixture } from './journal-conformance.js';

const START_AT = 1_700_000_000_000;
const TARGET = 'http://receiver.test/hooks';

/** What the worker would write: delivered, refused, or pending again with a retry at `nextAt`. */
function settlement(claim: ClaimedIntent, next: 'delivered' | 'refused' | number): Settlement {
  const { key } = claim.intent;
  if (typeof next === 'number')
    return {
      key,
      token: claim.token,
      next: { state: 'pending', nextAttemptAt: next, previousDelayMs: 10, sawUnknown: false },
    };
  const stopReason = next === 'delivered' ? ('ok' as const) : ('fatal_status' as const);
  const final = { stopReason, status: 200, body: null, detail: null, finishedAt: START_AT };
  return { key, token: claim.token, next: { state: next, sawUnknown: false, final } };
}

/**
 * The store, watched: `overlaps` counts claims of an intent while another intent of its ordering
 * key was held. A hold ends when its settlement is sent (before it commits: never a false alarm).
 */
function watched<Tx>(store: JournalStore<Tx>): { store: JournalStore<Tx>; overlaps: () => number } {
  const held = new Map<string, string>();
  let overlaps = 0;
  const watching: JournalStore<Tx> = Object.create(store) as JournalStore<Tx>;
  Object.assign(watching, {
    async claim(...args: Parameters<JournalStore<Tx>['claim']>) {
      const claims = await store.claim(...args);
      for (const { intent } of claims) {
        if (intent.orderingKey === null) continue;
        const other = held.get(intent.orderingKey);
        if (other !== undefined && other !== intent.key) overlaps += 1;
        held.set(intent.orderingKey, intent.key);
      }
      return claims;
    },
    settle(settlements: readonly Settlement[]) {
      for (const { key } of settlements)
        for (const [orderingKey, holder] of held) if (holder === key) held.delete(orderingKey);
      return store.settle(settlements);
    },
  });
  return { store: watching, overlaps: () => overlaps };
}

const keysOf = (claims: readonly ClaimedIntent[]): string[] =>
  claims.map((c) => c.intent.key).sort();

/**
 * FIFO per ordering key (docs/outbox.md, "Ordering"), alike on every journal store: an intent
 * with an ordering key is claimed only when every intent of its key recorded before it finished.
 */
export function runOrderingConformance<Tx>(
  name: string,
  open: () => Promise<JournalFixture<Tx>>,
  options: { skip?: string } = {},
): void {
  const withStore =
    (fn: (store: JournalStore<Tx>, clock: VirtualClock) => Promise<void>) => async () => {
      const fixture = await open();
      try {
        await fn(fixture.store, new VirtualClock({ startAt: START_AT }));
      } finally {
        await fixture.close();
      }
    };

  describe(`journal ordering: ${name}`, options, () => {
    it(
      'claims only the head of each ordering key; a re-queued retry keeps the next one waiting',
      withStore(async (store, clock) => {
        const journal = createJournal({ store, clock });
        for (const [key, orderingKey] of [
          ['a1', 'A'],
          ['a2', 'A'],
          ['b1', 'B'],
          ['u1', null],
          ['a3', 'A'],
        ] as const)
          await journal.record({ key, target: TARGET, orderingKey });
        assert.equal((await journal.get('a2'))?.orderingKey, 'A');
        assert.equal((await journal.get('u1'))?.orderingKey, null);
        const first = await store.claim('W', clock.now(), 1000, 10);
        assert.deepEqual(keysOf(first), ['a1', 'b1', 'u1'], 'a2 and a3 wait for a1');
        const a1 = first.find((c) => c.intent.key === 'a1')!;
        await store.settle([settlement(a1, clock.now() + 50)]);
        assert.deepEqual(await store.claim('X', clock.now(), 1000, 10), [], 'a1 retries later');
        assert.equal(await store.nextDueAt(), clock.now() + 50, 'a2 is not due before a1');
        await clock.advance(50);
        const [again] = await store.claim('X', clock.now(), 1000, 10);
        assert.deepEqual(keysOf([again!]), ['a1']);
        await store.settle([settlement(again!, 'delivered')]);
        const [a2] = await store.claim('Y', clock.now(), 1000, 10);
        assert.deepEqual(keysOf([a2!]), ['a2'], 'a1 delivered: a2 only, a3 behind it');
        await store.settle([settlement(a2!, 'refused')]);
        assert.deepEqual(keysOf(await store.claim('Z', clock.now(), 1000, 10)), ['a3'], 'dead a2');
      }),
    );

    it(
      'a lease that ran out keeps its key blocked; a cancelled head lets the next one go',
      withStore(async (store, clock) => {
        const journal = createJournal({ store, clock });
        await journal.record({ key: 'c1', target: TARGET, orderingKey: 'C' });
        await journal.record({ key: 'c2', target: TARGET, orderingKey: 'C' });
        const [c1] = await store.claim('dead', clock.now(), 100, 10);
        await store.startAttempts([
          { key: 'c1', token: c1!.token, attempt: 1, worker: 'dead', startedAt: clock.now() },
        ]);
        await clock.advance(100);
        const taken = await store.claim('B', clock.now(), 100, 10);
        assert.deepEqual(keysOf(taken), ['c1'], 'the interrupted head again, not c2');
        await store.settle([settlement(taken[0]!, clock.now() + 10)]);
        await journal.cancel('c1');
        assert.deepEqual(keysOf(await store.claim('B', clock.now(), 100, 10)), ['c2']);
      }),
    );

    it(
      'a reopened intent goes to the back of its key: after the ones pending, before later ones',
      withStore(async (store, clock) => {
        const journal = createJournal({ store, clock });
        for (const key of ['r1', 'r2'])
          await journal.record({ key, target: TARGET, orderingKey: 'R' });
        const [r1] = await store.claim('W', clock.now(), 1000, 10);
        await store.settle([settlement(r1!, 'refused')]);
        const [r2] = await store.claim('W', clock.now(), 1000, 10);
        assert.deepEqual(keysOf([r2!]), ['r2']);
        await journal.retry('r1');
        await journal.record({ key: 'r3', target: TARGET, orderingKey: 'R' });
        assert.deepEqual(
          await store.claim('X', clock.now(), 1000, 10),
          [],
          'r2 in flight: the reopened r1 waits, never two of a key at once',
        );
        await store.settle([settlement(r2!, 'delivered')]);
        const [again] = await store.claim('X', clock.now(), 1000, 10);
        assert.deepEqual(keysOf([again!]), ['r1'], 'r3 waits for the reopened r1');
        assert.deepEqual(
          (await journal.list({ state: 'pending' })).map((i) => i.key),
          ['r3', 'r1'],
          'newest first: r1 was re-queued before r3 was recorded',
        );
        await store.settle([settlement(again!, 'delivered')]);
        assert.deepEqual(keysOf(await store.claim('X', clock.now(), 1000, 10)), ['r3']);
      }),
    );

    it(
      'a replay puts the dead intents of a key at its back one behind the other, never side by side',
      withStore(async (store, clock) => {
        const journal = createJournal({ store, clock });
        for (const key of ['q1', 'q2', 'q3'])
          await journal.record({ key, target: TARGET, orderingKey: 'Q' });
        await journal.record({ key: 'u1', target: TARGET });
        for (const expected of [['q1', 'u1'], ['q2']]) {
          const claims = await store.claim('W', clock.now(), 1000, 10);
          assert.deepEqual(keysOf(claims), expected);
          await store.settle(claims.map((c) => settlement(c, 'refused')));
        }
        const result = await journal.replay({ state: 'refused' });
        assert.deepEqual([...result.reopened].sort(), ['q1', 'q2', 'u1']);
        const first = await store.claim('X', clock.now(), 1000, 10);
        assert.deepEqual(keysOf(first), ['q3', 'u1'], 'q3 was pending before the replay');
        await store.settle(first.map((c) => settlement(c, 'delivered')));
        const next = await store.claim('X', clock.now(), 1000, 10);
        assert.equal(next.length, 1, 'one of the replayed q1, q2 at a time');
        await store.settle(next.map((c) => settlement(c, 'delivered')));
        const last = await store.claim('X', clock.now(), 1000, 10);
        assert.deepEqual(keysOf([...next, ...last]), ['q1', 'q2']);
      }),
    );

    it(
      '3 workers, 30 keys × 10 intents, 30 % 503 and swallowed answers: every key in order',
      withStore(async (store, clock) => {
        const keys = 30;
        const perKey = 10;
        const journal = createJournal({ store, clock });
        for (let n = 1; n <= perKey; n++)
          for (let k = 0; k < keys; k++)
            await journal.record({
              key: `k${k}-${n}`,
              target: TARGET,
              body: JSON.stringify({ k: `k${k}`, n }),
              orderingKey: `k${k}`,
              maxAttempts: 40,
              baseDelayMs: 5,
              maxDelayMs: 40,
            });
        const receiver = createFifoReceiver({ random: seededRandom(7), perKey });
        const watch = watched(store);
        const fetch = fifoFetch(receiver);
        const counts = await Promise.all(
          [1, 2, 3].map((w) =>
            createOutboxWorker({
              store: watch.store,
              clock,
              fetch,
              owner: `w${w}`,
              batchSize: 8,
              random: seededRandom(w),
            }).resume(),
          ),
        );
        const report = receiver.report();
        assert.equal(report.violations, 0, 'no intent arrived before its predecessor was done');
        assert.deepEqual([report.keys, report.intents, report.inOrder], [keys, 300, keys]);
        assert.equal(counts[0]!.delivered, 300);
        assert.equal(watch.overlaps(), 0, 'never two intents of one key held at once');
        assert.ok(report.arrivals > 300, `failures were retried: ${report.arrivals} arrivals`);
      }),
    );
  });
}
