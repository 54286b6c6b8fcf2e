import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_RETRY_POLICY,
  resolveRetryPolicy,
  type RetryPolicyOptions,
} from '#oncely/policy/index.js';
import { InvalidOptionError, DEFAULT_STATUS_TABLE } from '#oncely/contract/index.js';

/** Asserts that the options are refused with a message naming `option` and matching `allowed`. */
function refused(options: Record<string, unknown>, option: string, allowed: RegExp): void {
  assert.throws(
    () => resolveRetryPolicy(options as Partial<RetryPolicyOptions>),
    (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError, String(error));
      assert.equal(error.option, option);
      assert.ok(error.message.includes(`invalid option ${option}:`), error.message);
      assert.match(error.message, allowed);
      return true;
    },
  );
}

test('the defaults are one visible object', () => {
  assert.deepEqual(DEFAULT_RETRY_POLICY, {
    maxAttempts: 3,
    baseDelayMs: 100,
    maxDelayMs: 10_000,
    jitter: 'full',
    schedule: null,
    maxRetryAfterMs: 30_000,
    retryAfterJitterRatio: 0.5,
    deadlineAt: Number.POSITIVE_INFINITY,
    statusTable: DEFAULT_STATUS_TABLE,
  });
  assert.deepEqual(resolveRetryPolicy(), DEFAULT_RETRY_POLICY);
});

test('maxAttempts must be an integer >= 1: 0, NaN, negative, fractional and Infinity are refused', () => {
  for (const maxAttempts of [0, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY, '3']) {
    refused({ maxAttempts }, 'maxAttempts', /expected an integer >= 1/);
  }
  assert.match(
    (() => {
      try {
        resolveRetryPolicy({ maxAttempts: 0 });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })(),
    /^invalid option maxAttempts: got 0, expected an integer >= 1$/,
  );
  assert.equal(resolveRetryPolicy({ maxAttempts: 1 }).maxAttempts, 1);
});

test('a negative or non-finite duration is refused, naming the option and the range', () => {
  refused(
    { maxDelayMs: -1 },
    'maxDelayMs',
    /got -1, expected a finite number of milliseconds >= 0/,
  );
  refused({ baseDelayMs: Number.NaN }, 'baseDelayMs', />= 0/);
  refused({ baseDelayMs: Number.POSITIVE_INFINITY }, 'baseDelayMs', />= 0/);
  refused({ maxRetryAfterMs: -5 }, 'maxRetryAfterMs', />= 0/);
  assert.equal(resolveRetryPolicy({ baseDelayMs: 0, maxDelayMs: 0 }).maxDelayMs, 0);
});

// Before: `--base-delay 1h` was accepted and every wait silently cut to the 10 s cap.
test('a base delay above the cap is refused, naming both, never cut to it', () => {
  refused({ baseDelayMs: 3_600_000 }, 'baseDelayMs', /at most maxDelayMs \(10000\)/);
  refused({ maxDelayMs: 0 }, 'baseDelayMs', /at most maxDelayMs \(0\)/);
  assert.equal(
    resolveRetryPolicy({ baseDelayMs: 3_600_000, maxDelayMs: 3_600_000 }).baseDelayMs,
    3_600_000,
  );
});

test('a schedule is a non-empty list of waits within the cap, with jitter none or full', () => {
  refused({ schedule: [] }, 'schedule', /non-empty list/);
  refused({ schedule: [5_000, -1] }, 'schedule', /finite and >= 0/);
  refused({ schedule: [5_000, 20_000] }, 'schedule', /at most maxDelayMs \(10000\)/);
  refused(
    { schedule: [5_000], jitter: 'decorrelated' },
    'jitter',
    /with a schedule, one of none, full/,
  );
  assert.deepEqual(resolveRetryPolicy({ schedule: [1, 2] }).schedule, [1, 2]);
  assert.equal(
    resolveRetryPolicy({ maxRetryAfterMs: Number.POSITIVE_INFINITY }).maxRetryAfterMs,
    Number.POSITIVE_INFINITY,
  );
});

test('an unknown jitter is refused, listing the allowed ones', () => {
  refused(
    { jitter: 'bogus' },
    'jitter',
    /got "bogus", expected one of none, full, equal, decorrelated/,
  );
});

test('retryAfterJitterRatio and deadlineAt are checked too', () => {
  refused({ retryAfterJitterRatio: -0.1 }, 'retryAfterJitterRatio', /from 0 to 10/);
  refused({ retryAfterJitterRatio: Number.NaN }, 'retryAfterJitterRatio', /from 0 to 10/);
  refused({ deadlineAt: Number.NaN }, 'deadlineAt', /ms since the epoch, or Infinity/);
  refused({ deadlineAt: '2026-01-01' }, 'deadlineAt', /ms since the epoch/);
});

test('closesAt, the older name of deadlineAt, is still accepted and checked under its own name', () => {
  assert.equal(resolveRetryPolicy({ closesAt: 5_000 }).deadlineAt, 5_000);
  assert.equal(resolveRetryPolicy({ closesAt: 5_000, deadlineAt: 5_000 }).deadlineAt, 5_000);
  assert.equal('closesAt' in resolveRetryPolicy({ closesAt: 5_000 }), false);
  refused({ closesAt: Number.NaN }, 'closesAt', /ms since the epoch, or Infinity/);
  refused(
    { closesAt: 5_000, deadlineAt: 6_000 },
    'closesAt',
    /the same instant as deadlineAt \(6000\).*older name of deadlineAt/,
  );
});

test('an option given as undefined means the default', () => {
  assert.equal(
    resolveRetryPolicy({ maxAttempts: undefined } as unknown as Partial<RetryPolicyOptions>)
      .maxAttempts,
    3,
  );
});

test('only policy options end up in the policy', () => {
  // Regression: retry() passes its whole options object (clock, signal, callbacks, key).
  const policy = resolveRetryPolicy({
    maxAttempts: 2,
    key: 'k',
    onAttempt: () => {},
  } as Partial<RetryPolicyOptions>);
  assert.deepEqual(Object.keys(policy).sort(), Object.keys(DEFAULT_RETRY_POLICY).sort());
  assert.equal(policy.maxAttempts, 2);
});
