import { test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '#oncely/time/index.js';

// The real clock is tested only where a virtual one cannot stand in: that its timers honour
// an abort and a very long wait. No assertion depends on how fast this machine is.

test('now() reads the real time', () => {
  const before = Date.now();
  const now = systemClock.now();
  assert.ok(now >= before && now <= Date.now());
});

test('an already aborted signal rejects at once with its reason', async () => {
  const reason = new Error('cancelled');
  await assert.rejects(
    systemClock.sleep(10_000, AbortSignal.abort(reason)),
    (error) => error === reason,
  );
  await assert.rejects(systemClock.sleep(10_000, AbortSignal.abort()), { name: 'AbortError' });
});

test('abort cancels a pending sleep', async () => {
  const controller = new AbortController();
  const sleeping = systemClock.sleep(60_000, controller.signal);
  controller.abort();
  await assert.rejects(sleeping, { name: 'AbortError' });
});

test('a sleep longer than a timer can hold (2^31 ms) is not cut to 1 ms', async () => {
  // Regression: setTimeout turns a delay past 2^31 - 1 ms into 1 ms, so a long Retry-After
  // would have been "honoured" by retrying at once. A 20 ms timer set afterwards must win.
  const controller = new AbortController();
  const long = systemClock.sleep(2 ** 31 + 5, controller.signal).then(
    () => 'long woke',
    () => 'long aborted',
  );
  const first = await Promise.race([long, systemClock.sleep(20).then(() => 'short woke')]);
  assert.equal(first, 'short woke');
  controller.abort();
  assert.equal(await long, 'long aborted');
});

test('zero, negative and NaN sleeps resolve', async () => {
  await systemClock.sleep(0);
  await systemClock.sleep(-10);
  await systemClock.sleep(Number.NaN);
});

test('a background sleep never keeps the process alive; a plain one does', async () => {
  // Node counts only the timers that keep the event loop alive as active 'Timeout' resources.
  const timers = (): number =>
    process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const stop = new AbortController();
  const background = systemClock.sleepInBackground!(60_000, stop.signal).catch(() => 'stopped');
  assert.equal(timers(), before, 'the heartbeat timer is unref()ed');
  const plain = systemClock.sleep(60_000, stop.signal).catch(() => 'stopped');
  assert.equal(timers(), before + 1);
  stop.abort();
  assert.deepEqual(await Promise.all([background, plain]), ['stopped', 'stopped']);
});
