import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  InvalidKeyError,
  isInvalidKeyError,
  isOncelyError,
  keyFor,
  keyProblem,
  MAX_KEY_LENGTH,
  newKey,
  validateKey,
} from '#oncely/contract/index.js';

/** Asserts that `key` is refused with a message matching `message` (exact when a string). */
function refused(key: unknown, message: string | RegExp): void {
  const problem = keyProblem(key);
  if (typeof message === 'string') assert.equal(problem, message);
  else assert.match(problem ?? '', message);
  assert.throws(
    () => validateKey(key),
    (error: unknown) => {
      assert.ok(error instanceof InvalidKeyError);
      assert.ok(isInvalidKeyError(error) && isOncelyError(error));
      assert.equal(error.code, 'invalid_key');
      assert.equal(error.message, problem);
      assert.equal(error.key, key);
      return true;
    },
  );
}

test('a good key is returned unchanged', () => {
  for (const key of [
    'achen:lab3:v1',
    'a',
    '550e8400-e29b-41d4-a716-446655440000',
    'with inner space',
    '~!@#$%^&*()',
  ]) {
    assert.equal(keyProblem(key), undefined);
    assert.equal(validateKey(key), key);
  }
});

test('a blank or whitespace-only key is exactly "empty idempotency key" (the dropbox story, fixture C)', () => {
  for (const key of ['', ' ', '   ', '\t', '\n', ' \t\r\n ']) refused(key, 'empty idempotency key');
});

test('255 characters pass; 256 are refused with both lengths named', () => {
  assert.equal(MAX_KEY_LENGTH, 255);
  assert.equal(validateKey('k'.repeat(255)), 'k'.repeat(255));
  refused('k'.repeat(256), /256 characters long; at most 255/);
});

test('non-ASCII characters are refused, naming the code point', () => {
  refused('café', /outside printable ASCII \(U\+00E9\)/);
  refused('key-😀', /outside printable ASCII \(U\+1F600\)/);
});

test('control characters are refused, naming the code point', () => {
  refused('a\u0000b', /outside printable ASCII \(U\+0000\)/);
  refused('a\tb', /outside printable ASCII \(U\+0009\)/);
  refused('a\x7fb', /outside printable ASCII \(U\+007F\)/);
  refused('a\r\nb', /U\+000D/);
});

test('leading or trailing whitespace is refused: a header parser would strip it', () => {
  refused(' abc', 'idempotency key has leading or trailing whitespace');
  refused('abc ', 'idempotency key has leading or trailing whitespace');
});

test('a key that is not a string is refused, naming what it was', () => {
  refused(42, 'idempotency key must be a string, got number');
  refused(null, 'idempotency key must be a string, got null');
  refused(undefined, 'idempotency key must be a string, got undefined');
});

test('keyFor is deterministic and independent of field order', () => {
  const a = keyFor({ student: 'achen', assignment: 'lab3', version: 1 });
  const b = keyFor({ version: 1, assignment: 'lab3', student: 'achen' });
  assert.equal(a, b);
  assert.equal(keyFor({ student: 'achen', assignment: 'lab3', version: 1 }), a);
  assert.match(a, /^ik_[0-9a-f]{40}$/);
  assert.equal(validateKey(a), a);
});

test('keyFor gives different intents different keys, and takes a prefix', () => {
  const base = { student: 'achen', assignment: 'lab3', version: 1 };
  const keys = new Set([
    keyFor(base),
    keyFor({ ...base, version: 2 }),
    keyFor({ ...base, version: '1' }),
    keyFor({ ...base, student: 'bchen' }),
  ]);
  assert.equal(keys.size, 4);
  assert.match(keyFor(base, 'dropbox'), /^dropbox_[0-9a-f]{40}$/);
  assert.equal(keyFor(base, 'dropbox').slice(-40), keyFor(base).slice(-40));
});

test('keyFor refuses a prefix that would make a bad key', () => {
  assert.throws(() => keyFor({ a: 1 }, 'bad prefix é'), InvalidKeyError);
  assert.throws(() => keyFor({ a: 1 }, 'p'.repeat(250)), /at most 255/);
});

test('newKey uses the injected generator and validates what it returns', () => {
  assert.equal(
    newKey(() => 'fixed-key-1'),
    'fixed-key-1',
  );
  assert.throws(() => newKey(() => '  '), {
    name: 'InvalidKeyError',
    message: 'empty idempotency key',
  });
  let calls = 0;
  newKey(() => `k${++calls}`);
  assert.equal(calls, 1, 'the generator is called once per key');
});

test('newKey by default gives distinct, valid UUIDs', () => {
  const a = newKey();
  const b = newKey();
  assert.notEqual(a, b);
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});
