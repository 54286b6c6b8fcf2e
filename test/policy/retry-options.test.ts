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
  assert.equal(resolveRetryPolicy({ maxDelayMs: 0 }).maxDelayMs, 0);
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
