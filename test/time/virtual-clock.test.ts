import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '#oncely/time/index.js';

test('auto mode: each sleep moves time by its duration and resolves at once', async () => {
  const clock = new VirtualClock({ startAt: 1_000 });
  assert.equal(clock.now(), 1_000);
  await clock.sleep(250);
  await clock.sleep(0);
  await clock.sleep(-5);
  assert.equal(clock.now(), 1_250);
  assert.deepEqual(clock.sleeps, [250, 0, 0]);
  assert.equal(clock.pendingCount, 0);
  await clock.advance(50);
  assert.equal(clock.now(), 1_300, 'advance works in auto mode too');
});

test('the default start is 0', () => {
  assert.equal(new VirtualClock().now(), 0);
});

test('manual mode: sleeps wake in order of their wake-up instant, ties in the order taken', async () => {
  const clock = new VirtualClock({ autoAdvance: false });
  const woke: string[] = [];
  const nap = (ms: number, name: string): Promise<void> =>
    clock.sleep(ms).then(() => {
      woke.push(`${name}@${clock.now()}`);
    });
  const all = [nap(30, 'a'), nap(10, 'b'), nap(10, 'c'), nap(20, 'd')];
  assert.equal(clock.pendingCount, 4);
  assert.deepEqual(woke, [], 'nothing wakes before time moves');

  await clock.advance(25);
  assert.deepEqual(woke, ['b@10', 'c@10', 'd@20']);
  assert.equal(clock.now(), 25);
  assert.equal(clock.pendingCount, 1);

  await clock.runAll();
  await Promise.all(all);
  assert.deepEqual(woke, ['b@10', 'c@10', 'd@20', 'a@30']);
  assert.equal(clock.now(), 30);
});

test('advanceTo never moves time backwards; advance(0) wakes a zero sleep', async () => {
  const clock = new VirtualClock({ startAt: 100, autoAdvance: false });
  let woke = false;
  void clock.sleep(0).then(() => (woke = true));
  await clock.advanceTo(50);
  assert.equal(clock.now(), 100);
  assert.equal(woke, false, 'an instant in the past is not "now"');
  await clock.advance(0);
  assert.equal(woke, true);
  assert.equal(clock.now(), 100);
});

test('a sleeper that sleeps again on waking is woken on time within one advance', async () => {
  const clock = new VirtualClock({ autoAdvance: false });
  const wakes: number[] = [];
  const loop = (async () => {
    for (let i = 0; i < 3; i++) {
      await clock.sleep(10);
      wakes.push(clock.now());
    }
  })();
  await clock.advance(100);
  await loop;
  assert.deepEqual(wakes, [10, 20, 30]);
  assert.equal(clock.now(), 100);
});

test('work started just before advance, with many awaits before its sleep, sleeps from the right instant', async () => {
  // Regression: advance used to flush a fixed 20 microtask turns, so a sleep reached after more
  // awaits than that was taken only after time had jumped, and woke far too late (or never).
  const clock = new VirtualClock({ autoAdvance: false });
  const wakes: number[] = [];
  const work = (async () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 50; i++) await Promise.resolve();
      await clock.sleep(100);
      wakes.push(clock.now());
    }
  })();
  await clock.advance(1_000);
  await work;
  assert.deepEqual(wakes, [100, 200]);
});

test('abort cancels a pending sleep: it rejects with the reason and never wakes', async () => {
  const clock = new VirtualClock({ autoAdvance: false });
  const controller = new AbortController();
  const reason = new Error('stop');
  const sleeping = clock.sleep(1_000, controller.signal);
  let otherWoke = false;
  void clock.sleep(500).then(() => (otherWoke = true));
  assert.equal(clock.pendingCount, 2);
  controller.abort(reason);
  await assert.rejects(sleeping, (error) => error === reason);
  assert.equal(clock.pendingCount, 1);
  await clock.advance(2_000);
  assert.equal(otherWoke, true, 'other sleeps are untouched');
  assert.equal(clock.pendingCount, 0);
});

test('an already aborted signal rejects at once, in both modes, with an AbortError by default', async () => {
  for (const autoAdvance of [true, false]) {
    const clock = new VirtualClock({ autoAdvance });
    await assert.rejects(clock.sleep(10, AbortSignal.abort()), { name: 'AbortError' });
    assert.equal(clock.now(), 0, 'no time passes');
    assert.equal(clock.pendingCount, 0);
  }
});

test('aborting after the sleep woke changes nothing', async () => {
  const clock = new VirtualClock({ autoAdvance: false });
  const controller = new AbortController();
  const sleeping = clock.sleep(10, controller.signal);
  await clock.advance(10);
  controller.abort();
  await sleeping;
});

test('a NaN sleep is no wait, and does not poison the clock', async () => {
  const clock = new VirtualClock({ startAt: 5 });
  await clock.sleep(Number.NaN);
  assert.equal(clock.now(), 5);
});

test('background sleeps are counted apart: pendingCount is what the work under test waits for', async () => {
  const clock = new VirtualClock();
  const beat = clock.sleepInBackground(1_000);
  const manual = new VirtualClock({ autoAdvance: false });
  const pause = manual.sleep(10);
  const heartbeat = manual.sleepInBackground(10);
  assert.deepEqual([manual.pendingCount, manual.backgroundCount], [1, 1]);
  await manual.advance(10);
  await Promise.all([pause, heartbeat]);
  assert.equal(clock.pendingCount, 0, 'a heartbeat left behind is not the work under test');
  assert.equal(clock.backgroundCount, 1);
  await clock.advance(1_000);
  await beat;
  assert.equal(clock.backgroundCount, 0);
});
