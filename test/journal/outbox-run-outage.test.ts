import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { scriptedFetch } from './journal-conformance.js';

// bench/chaos found it: `oncely outbox run --watch` (worker.run) ended on the first pass that met
// a stopped PostgreSQL, so a journal outage of two seconds took the worker down for good.
it('run() outlives passes that fail while the journal is down, and delivers once it is back', async () => {
  const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
  const inner = createMemoryJournalStore();
  let outageLeft = 3;
  const store: JournalStore<unknown> = {
    ...inner,
    claim: (...args) => {
      if (outageLeft-- > 0) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      return inner.claim(...args);
    },
  };
  const journal = createJournal({ store, clock });
  await journal.record({ key: 'order-1', target: 'http://receiver.test/hooks' });
  const { fetch, calls } = scriptedFetch([200]);
  const errors: unknown[] = [];
  const stop = new AbortController();
  const worker = createOutboxWorker({
    store,
    clock,
    fetch,
    pollMs: 100,
    onError: (error) => errors.push(error),
    onSettled: () => stop.abort(),
  });
  await worker.run(stop.signal);
  assert.equal(errors.length, 3, 'each failed pass is reported');
  assert.equal(calls.length, 1);
  assert.equal((await journal.get('order-1'))?.state, 'delivered');
  assert.deepEqual(clock.sleeps.slice(0, 3), [100, 100, 100], 'it waits pollMs between tries');
});
