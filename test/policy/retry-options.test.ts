import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_RETRY_POLICY,
  resolveRetryPolicy,
  type RetryPolicyOptions,
} from '../../src/policy/index.js';
import { InvalidOptionError, DEFAULT_STATUS_TABLE } from '../../src/contract/index.js';

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
    closesAt: Number.POSITIVE_INFINITY,
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

test('retryAfterJitterRatio and closesAt are checked too', () => {
  refused({ retryAfterJitterRatio: -0.1 }, 'retryAfterJitterRatio', /from 0 to 10/);
  refused({ retryAfterJitterRatio: Number.NaN }, 'retryAfterJitterRatio', /from 0 to 10/);
  refused({ closesAt: Number.NaN }, 'closesAt', /ms since the epoch, or Infinity/);
  refused({ closesAt: '2026-01-01' }, 'closesAt', /ms since the epoch/);
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
