import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWakeLatch } from '#oncely/journal/wake-latch.js';
import { VirtualClock } from '#oncely/time/index.js';
import { turnsUntil } from '../support/turns-until.js';

/** Settles to what `promise` did, without waiting for it: 'pending' while it has not. */
async function stateOf(promise: Promise<unknown>): Promise<string> {
  let state = 'pending';
  promise.then(
    () => (state = 'resolved'),
    (error: unknown) => (state = `rejected: ${String((error as Error)?.message ?? error)}`),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
}

describe('wake latch: the sleep between two worker passes', () => {
  it('a wake ends the sleep at once, no time passing, and its timer is cancelled', async () => {
    const clock = new VirtualClock({ startAt: 1000, autoAdvance: false });
    const latch = createWakeLatch();
    const sleep = latch.sleep(clock, 60_000, undefined);
    assert.equal(clock.pendingCount, 1);
    latch.wake();
    assert.equal(await stateOf(sleep), 'resolved');
    assert.equal(clock.now(), 1000);
    await turnsUntil(() => clock.pendingCount === 0);
  });

  it('a wake with no one asleep ends the next sleep at once, and only that one', async () => {
    const clock = new VirtualClock({ autoAdvance: false });
    const latch = createWakeLatch();
    latch.wake(); // an intent recorded while a pass ran
    assert.equal(await stateOf(latch.sleep(clock, 60_000, undefined)), 'resolved');
    assert.equal(clock.pendingCount, 0, 'no timer taken');
    const next = latch.sleep(clock, 50, undefined);
    assert.equal(await stateOf(next), 'pending');
    await clock.advance(50);
    assert.equal(await stateOf(next), 'resolved', 'the clock ends it');
  });

  it('a stop rejects the sleep with its reason; a stop before it, at once', async () => {
    const clock = new VirtualClock({ autoAdvance: false });
    const latch = createWakeLatch();
    const stop = new AbortController();
    const sleep = latch.sleep(clock, 60_000, stop.signal);
    stop.abort(new Error('stopped'));
    assert.equal(await stateOf(sleep), 'rejected: stopped');
    assert.equal(clock.pendingCount, 0);
    const after = latch.sleep(clock, 60_000, stop.signal);
    assert.equal(await stateOf(after), 'rejected: stopped');
    assert.equal(clock.pendingCount, 0);
    latch.wake();
    assert.equal(await stateOf(latch.sleep(clock, 10, undefined)), 'resolved', 'woken still');
  });
});
