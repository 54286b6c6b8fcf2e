import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import type { JournalFixture } from './journal-conformance.js';
import { scriptedFetch } from './journal-conformance.js';

const TARGET = 'http://receiver.test/hooks';

/** Counts the wakes a store's watch gives; `next()` resolves at the next one. */
async function listenTo<Tx>(store: JournalStore<Tx>) {
  let count = 0;
  const waiting: Array<() => void> = [];
  const stop = await store.watch(() => {
    count += 1;
    for (const resolve of waiting.splice(0)) resolve();
  });
  return {
    get count() {
      return count;
    },
    next: () => new Promise<void>((resolve) => waiting.push(resolve)),
    stop,
  };
}

/** A lost wake would leave a test waiting: it fails after this instead, whatever the load. */
const LOST = { timeout: 30_000 };

/**
 * The journal's wake-up (journal-wake.ts), on every backend: what a worker hears instead of
 * waiting for its next poll. Each wake is awaited, never slept for.
 */
export function runWakeConformance<Tx>(
  withFixture: (
    fn: (f: JournalFixture<Tx>, clock: VirtualClock) => Promise<void>,
  ) => () => Promise<void>,
): void {
  it(
    'watch hears a recorded intent and a reopened one, and nothing once stopped',
    LOST,
    withFixture(async ({ store }, clock) => {
      const journal = createJournal({ store, clock });
      const heard = await listenTo(store);
      let wake = heard.next();
      await journal.record({ key: 'w1', target: TARGET, body: '{}' });
      await wake;
      await journal.cancel('w1');
      wake = heard.next();
      await journal.retry('w1');
      await wake;
      const count = heard.count;
      heard.stop();
      await journal.record({ key: 'w2', target: TARGET, body: '{}' });
      // A second watcher, still listening, hears w3: by then a stray wake for w2 would have come.
      const other = await listenTo(store);
      wake = other.next();
      await journal.record({ key: 'w3', target: TARGET, body: '{}' });
      await wake;
      other.stop();
      assert.equal(heard.count, count, 'no wake after stop');
    }),
  );

  it(
    'an intent recorded in the app transaction wakes the watcher once committed (or by poll)',
    LOST,
    withFixture(async ({ store, appTransaction }, clock) => {
      if (appTransaction === undefined) return; // memory: recordWithin is record (tested above)
      const journal = createJournal({ store, clock });
      await store.ready(); // the tables, before the app's transaction takes the writer
      const heard = await listenTo(store);
      const wake = heard.next();
      await appTransaction((tx) =>
        journal.recordWithin(tx, { key: 'in-tx', target: TARGET, body: '{}' }).then(() => {}),
      );
      if (store.name === 'postgres') await wake; // NOTIFY leaves with the COMMIT
      heard.stop();
      assert.equal((await journal.report('in-tx'))?.intent.state, 'pending');
    }),
  );

  it(
    "a worker idle in its poll attempts a recorded intent at once, the clock's poll not reached",
    LOST,
    withFixture(async ({ store }) => {
      const clock = new VirtualClock({ startAt: 1_700_000_000_000, autoAdvance: false });
      const journal = createJournal({ store, clock });
      const { fetch, calls } = scriptedFetch([200]);
      let sent: () => void = () => {};
      const delivered = new Promise<void>((resolve) => (sent = resolve));
      const worker = createOutboxWorker({
        store,
        clock,
        fetch: (async (...args: Parameters<typeof fetch>) => {
          const response = await fetch(...args);
          sent();
          return response;
        }) as typeof fetch,
        pollMs: 60_000,
      });
      const stop = new AbortController();
      const running = worker.run(stop.signal);
      // The worker found nothing and sleeps out its poll: a sleep of 60 s is pending.
      while (clock.pendingCount === 0) await new Promise((resolve) => setImmediate(resolve));
      const before = clock.now();
      await journal.record({ key: 'fast', target: TARGET, body: '{}' });
      await delivered;
      stop.abort();
      await running;
      assert.equal(calls.length, 1);
      assert.equal(clock.now(), before, 'no time passed: the wake, not the poll, started it');
      assert.ok(clock.sleeps.includes(60_000), 'the worker had gone to sleep for its poll');
    }),
  );
}
