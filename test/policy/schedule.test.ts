import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from '#oncely/time/random.js';
import { DEFAULT_OUTBOX_POLICY, DEFAULT_OUTBOX_SCHEDULE_MS } from '#oncely/journal/index.js';
import { expectDelays } from '../support/expect-delays.js';

const SVIX = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
const outbox = { ...DEFAULT_OUTBOX_POLICY, schedule: [...DEFAULT_OUTBOX_SCHEDULE_MS] };

test("the outbox's default schedule is Svix's, eight attempts over about 27.5 hours", () => {
  assert.deepEqual(DEFAULT_OUTBOX_SCHEDULE_MS, SVIX);
  assert.equal(DEFAULT_OUTBOX_POLICY.maxAttempts, 8);
  const spanMs = SVIX.reduce((a, b) => a + b, 0);
  assert.equal(spanMs, (27 * 3600 + 35 * 60 + 5) * 1000);
});

test('without jitter, the waits are the steps exactly; the budget ends it after the last', () => {
  expectDelays({ ...outbox, jitter: 'none' }, Array(8).fill(503), SVIX, {
    stop: 'budget_exhausted',
  });
});

test('jitter lengthens each step by up to 10 %, never shortens it, for any seed', () => {
  for (let seed = 0; seed < 100; seed++)
    expectDelays(
      outbox,
      Array(8).fill(503),
      SVIX.map((step) => [step, Math.min(36_000_000, step * 1.1)] as const),
      { random: seededRandom(seed), stop: 'budget_exhausted' },
    );
});

test('past its end the last step repeats, as many times as the attempt limit allows', () => {
  expectDelays(
    { schedule: [1_000, 5_000], jitter: 'none', maxAttempts: 5 },
    [503, 503, 503, 503, 503],
    [1_000, 5_000, 5_000, 5_000],
    { stop: 'budget_exhausted' },
  );
});

test("a Retry-After of two hours is waited to the second on the outbox's defaults", () => {
  const trace = expectDelays(
    outbox,
    [{ kind: 'response', status: 503, retryAfter: '7200' }, 200],
    [7_200_000],
    { stop: 'ok', random: seededRandom(3) },
  );
  assert.equal(trace.delayReasons[0], 'retry-after');
});
