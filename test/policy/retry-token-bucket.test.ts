import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RETRY_TOKEN_BUCKET, RetryTokenBucket } from '#oncely/policy/index.js';
import { InvalidOptionError } from '#oncely/contract/index.js';

test('the defaults are the AWS SDK standard mode: 500, retry 5, timeout retry 10, +1', () => {
  assert.deepEqual(DEFAULT_RETRY_TOKEN_BUCKET, {
    capacity: 500,
    retryCost: 5,
    timeoutRetryCost: 10,
    noRetryIncrement: 1,
  });
  const bucket = new RetryTokenBucket();
  assert.equal(bucket.balance, 500);
  assert.equal(bucket.costOf(false), 5);
  assert.equal(bucket.costOf(true), 10);
});

test('retries take tokens until the bucket is drained, then it refuses and takes nothing', () => {
  const bucket = new RetryTokenBucket();
  for (let i = 0; i < 100; i++) assert.equal(bucket.tryAcquire(bucket.costOf(false)), true);
  assert.equal(bucket.balance, 0);
  assert.equal(bucket.tryAcquire(5), false);
  assert.equal(bucket.balance, 0);

  const small = new RetryTokenBucket({ capacity: 12 });
  assert.equal(small.tryAcquire(small.costOf(true)), true);
  assert.equal(small.balance, 2);
  assert.equal(
    small.tryAcquire(small.costOf(false)),
    false,
    'a retry that would overdraw is refused',
  );
  assert.equal(small.balance, 2);
});

test('a success refunds its retry cost, or adds 1 when there was no retry, never past capacity', () => {
  const bucket = new RetryTokenBucket();
  bucket.tryAcquire(10);
  bucket.tryAcquire(5);
  assert.equal(bucket.balance, 485);
  bucket.recordSuccess(5);
  assert.equal(bucket.balance, 490, 'only the last retry is repaid');
  bucket.recordSuccess(0);
  assert.equal(bucket.balance, 491);
  const full = new RetryTokenBucket();
  full.recordSuccess(0);
  full.recordSuccess(10);
  assert.equal(full.balance, 500);
});

test('options are validated, and undefined means the default', () => {
  assert.throws(
    () => new RetryTokenBucket({ capacity: -1 }),
    (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError);
      assert.equal(
        error.message,
        'invalid option retryBudget.capacity: got -1, expected a finite number >= 0',
      );
      return true;
    },
  );
  assert.throws(() => new RetryTokenBucket({ retryCost: Number.NaN }), /retryBudget\.retryCost/);
  assert.throws(
    () => new RetryTokenBucket({ timeoutRetryCost: Number.POSITIVE_INFINITY }),
    /retryBudget\.timeoutRetryCost/,
  );
  const bucket = new RetryTokenBucket({ capacity: undefined, retryCost: 2 } as unknown as {
    retryCost: number;
  });
  assert.equal(bucket.capacity, 500);
  assert.equal(bucket.retryCost, 2);
});
