import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  InvalidKeyError,
  InvalidOptionError,
  isInvalidKeyError,
  isInvalidOptionError,
  isOncelyError,
  OncelyError,
} from '#oncely/contract/index.js';

test('OncelyError carries a stable code and a cause', () => {
  const cause = new Error('disk full');
  const error = new OncelyError('ledger_unavailable', 'the ledger is unavailable', { cause });
  assert.equal(error.code, 'ledger_unavailable');
  assert.equal(error.message, 'the ledger is unavailable');
  assert.equal(error.cause, cause);
  assert.equal(error.name, 'OncelyError');
  assert.ok(error instanceof Error);
  assert.ok(isOncelyError(error));
});

test('isOncelyError recognises the brand, even from another copy of the package', () => {
  const foreign = Object.assign(new Error('x'), { [Symbol.for('oncely.error')]: true, code: 'x' });
  assert.ok(isOncelyError(foreign));
  for (const value of [new Error('x'), null, undefined, 'oncely', { code: 'invalid_key' }])
    assert.ok(!isOncelyError(value));
});

test('InvalidOptionError names the option, the value and the allowed range', () => {
  const error = new InvalidOptionError('maxAttempts', 0, 'an integer >= 1');
  assert.equal(error.message, 'invalid option maxAttempts: got 0, expected an integer >= 1');
  assert.equal(error.option, 'maxAttempts');
  assert.equal(error.value, 0);
  assert.equal(error.allowed, 'an integer >= 1');
  assert.ok(isInvalidOptionError(error) && !isInvalidKeyError(error));
  assert.match(new InvalidOptionError('jitter', 'bogus', 'one of none').message, /got "bogus"/);
  assert.match(new InvalidOptionError('closesAt', NaN, 'an instant').message, /got NaN/);
  assert.match(new InvalidOptionError('clock', {}, 'a Clock').message, /got object/);
});

test('InvalidKeyError keeps the key and the message as given', () => {
  const error = new InvalidKeyError('empty idempotency key', ' ');
  assert.equal(error.message, 'empty idempotency key');
  assert.equal(error.key, ' ');
  assert.ok(isInvalidKeyError(error) && !isInvalidOptionError(error));
});
