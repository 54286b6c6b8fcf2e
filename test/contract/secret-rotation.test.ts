import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { activeSecrets, rotateSecrets } from '#oncely/contract/secret-rotation.js';

const OLD = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW = 'whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=';
const NEWER = 'whsec_bm90IHRoZSBzZWNyZXQ=';
const T0 = 1_700_000_000_000;
const DAY = 86_400_000;

test('a rotation puts the new secret first, never expiring; the old one signs until the overlap ends', () => {
  const list = rotateSecrets([{ secret: OLD, expiresAt: null }], NEW, T0, DAY);
  assert.deepEqual(list, [
    { secret: NEW, expiresAt: null },
    { secret: OLD, expiresAt: T0 + DAY },
  ]);
  assert.deepEqual(activeSecrets(list, T0), [NEW, OLD]);
  assert.deepEqual(activeSecrets(list, T0 + DAY - 1), [NEW, OLD], 'the last moment of the overlap');
  assert.deepEqual(activeSecrets(list, T0 + DAY), [NEW], 'expired at its instant');
});

test('a second rotation within the overlap keeps the earlier expiry, drops expired ones, and may shorten', () => {
  const once = rotateSecrets([{ secret: OLD, expiresAt: null }], NEW, T0, DAY);
  const twice = rotateSecrets(once, NEWER, T0 + 1000, 7 * DAY);
  assert.deepEqual(twice, [
    { secret: NEWER, expiresAt: null },
    { secret: NEW, expiresAt: T0 + 1000 + 7 * DAY },
    { secret: OLD, expiresAt: T0 + DAY },
  ]);
  const later = rotateSecrets(once, NEWER, T0 + 2 * DAY, 0);
  assert.deepEqual(later, [{ secret: NEWER, expiresAt: null }], 'overlap 0: the old ones stop now');
  assert.deepEqual(activeSecrets(later, T0 + 2 * DAY), [NEWER]);
});

test('plain strings are secrets without expiry; the input list is not changed', () => {
  const list = Object.freeze([Object.freeze({ secret: OLD, expiresAt: null })]);
  rotateSecrets(list, NEW, T0, DAY);
  assert.deepEqual(list, [{ secret: OLD, expiresAt: null }]);
  assert.deepEqual(activeSecrets([NEW, { secret: OLD, expiresAt: T0 }], T0), [NEW]);
});

test('refuses a public key, a secret already listed, a malformed key, a negative overlap', () => {
  const list = [{ secret: OLD, expiresAt: null }];
  for (const [secret, overlap] of [
    ['whpk_ZlN4eg7dSSqi0moX9hQUk3orrOouK3QVQSlJa248c/g=', DAY],
    [OLD, DAY],
    ['whsk_short', DAY],
    [NEW, -1],
    [NEW, 1.5],
  ] as const)
    assert.throws(
      () => rotateSecrets(list, secret, T0, overlap),
      isInvalidOptionError,
      `${secret} ${overlap}`,
    );
});
