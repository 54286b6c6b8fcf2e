import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelayMs, JITTERS, type BackoffOptions, type Jitter } from '#oncely/policy/index.js';
import { seededRandom, type Random } from '#oncely/time/index.js';

const fixed = (value: number): Random => ({ next: () => value });
const never: Random = {
  next: () => {
    throw new Error('jitter none must not draw');
  },
};
const opts = (jitter: Jitter, baseDelayMs = 100, maxDelayMs = 1_000): BackoffOptions => ({
  baseDelayMs,
  maxDelayMs,
  jitter,
});
const schedule = (jitter: Jitter, random: Random, retries = 8): number[] => {
  const delays: number[] = [];
  let previous = 0;
  for (let retry = 1; retry <= retries; retry++) {
    previous = backoffDelayMs(retry, opts(jitter), random, previous);
    delays.push(previous);
  }
  return delays;
};

test('none: base * 2^(n-1), capped, and draws nothing', () => {
  assert.deepEqual(schedule('none', never, 6), [100, 200, 400, 800, 1_000, 1_000]);
});

test('full: uniform in [0, exponential)', () => {
  assert.equal(backoffDelayMs(3, opts('full'), fixed(0)), 0);
  assert.equal(backoffDelayMs(3, opts('full'), fixed(0.5)), 200);
  assert.equal(backoffDelayMs(3, opts('full'), fixed(0.999999)), 399);
  assert.equal(
    backoffDelayMs(10, opts('full'), fixed(0.5)),
    500,
    'the cap applies before the draw',
  );
});

test('equal: half fixed, half drawn', () => {
  assert.equal(backoffDelayMs(3, opts('equal'), fixed(0)), 200);
  assert.equal(backoffDelayMs(3, opts('equal'), fixed(0.5)), 300);
  assert.equal(backoffDelayMs(3, opts('equal'), fixed(0.999999)), 399);
});

test('decorrelated: uniform in [base, 3 * previous], capped', () => {
  assert.equal(backoffDelayMs(1, opts('decorrelated'), fixed(0), 0), 100);
  assert.equal(
    backoffDelayMs(1, opts('decorrelated'), fixed(0.5), 0),
    200,
    'the first step draws from [base, 3 * base]',
  );
  assert.equal(backoffDelayMs(5, opts('decorrelated'), fixed(0.5), 300), 500);
  assert.equal(backoffDelayMs(5, opts('decorrelated'), fixed(0.999), 900), 1_000, 'capped');
});

test('every jitter stays within [0, cap], whatever the draw', () => {
  for (const jitter of JITTERS) {
    for (const r of [0, 0.25, 0.5, 0.999999]) {
      let previous = 0;
      for (let retry = 1; retry <= 20; retry++) {
        previous = backoffDelayMs(retry, opts(jitter), fixed(r), previous);
        assert.ok(
          previous >= 0 && previous <= 1_000,
          `${jitter} r=${r} retry=${retry}: ${previous}`,
        );
      }
    }
  }
});

test('with a seeded Random, the same seed gives the same delays, another seed others', () => {
  for (const jitter of ['full', 'equal', 'decorrelated'] as const) {
    assert.deepEqual(schedule(jitter, seededRandom(7)), schedule(jitter, seededRandom(7)), jitter);
    assert.notDeepEqual(
      schedule(jitter, seededRandom(7)),
      schedule(jitter, seededRandom(8)),
      jitter,
    );
  }
});

test('a zero base stays zero after a thousand retries, never NaN', () => {
  // Regression: 0 * 2^1024 is 0 * Infinity, which is NaN.
  for (const jitter of JITTERS)
    assert.equal(backoffDelayMs(2_000, opts(jitter, 0), fixed(0.5)), 0, jitter);
  assert.equal(
    backoffDelayMs(2_000, opts('none'), never),
    1_000,
    'a non-zero base still reaches the cap',
  );
});
