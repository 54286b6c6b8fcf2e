import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { signWebhook, verifyWebhook } from '#oncely/contract/standard-webhooks.js';
import {
  generateWebhookKeyPair,
  generateWebhookSecret,
  webhookKeyKind,
} from '#oncely/contract/webhook-keys.js';

// The v1a vector of the Standard Webhooks reference libraries (standard-webhooks/standard-webhooks,
// libraries/go/webhook_asymmetric_test.go, TestAsymmetricWebhookSign): the seed is the whsk_ body.
// The JavaScript `standardwebhooks` package has no v1a, so this vector is the cross-check.
const V1A = {
  secretKey: 'whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=',
  // ed25519 public key of that seed (RFC 8032 derivation, as Go's NewKeyFromSeed does).
  publicKey: 'whpk_ZlN4eg7dSSqi0moX9hQUk3orrOouK3QVQSlJa248c/g=',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampS: 1614265330,
  payload: '{"test": 2432232314}',
  signature:
    'v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==',
};
// The v1 vector (libraries/javascript/src/index.test.ts), as in standard-webhooks.test.ts.
const V1 = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT = V1A.timestampS * 1000;
const reason = (keys: string[], headers: Record<string, string>, body = V1A.payload, at = AT) => {
  const result = verifyWebhook(keys, new Headers(headers), body, at);
  return result.ok ? 'ok' : result.reason;
};

test('signs the v1a reference vector exactly, and verifies it with the whpk_ public key', () => {
  const headers = signWebhook(V1A.secretKey, V1A.id, AT + 999, V1A.payload);
  assert.deepEqual(headers, {
    'webhook-id': V1A.id,
    'webhook-timestamp': String(V1A.timestampS),
    'webhook-signature': V1A.signature,
  });
  assert.equal(reason([V1A.publicKey], headers), 'ok');
  assert.equal(reason([V1A.secretKey], headers), 'ok', 'the secret key verifies too');
});

test('several secrets: one signature each in one header, in order; any one known key verifies', () => {
  const headers = signWebhook([V1.secret, V1A.secretKey], V1A.id, AT, V1A.payload);
  assert.equal(headers['webhook-signature'], `${V1.signature} ${V1A.signature}`);
  assert.equal(reason([V1.secret], headers), 'ok', 'a receiver knowing only the v1 secret');
  assert.equal(reason([V1A.publicKey], headers), 'ok', 'a receiver knowing only the public key');
  const other = generateWebhookKeyPair().publicKey;
  assert.equal(reason([other, 'whsec_bm90IHRoZSBzZWNyZXQ=', V1A.publicKey], headers), 'ok');
  assert.equal(reason([other, 'whsec_bm90IHRoZSBzZWNyZXQ='], headers), 'bad_signature');
  // One secret as a one-element list or as a string: the same headers as before lists existed.
  assert.deepEqual(
    signWebhook([V1.secret], V1A.id, AT, V1A.payload),
    signWebhook(V1.secret, V1A.id, AT, V1A.payload),
  );
});

test('the standardwebhooks package verifies a header carrying v1 and v1a signatures (it skips v1a)', () => {
  const secret = generateWebhookSecret();
  const { secretKey } = generateWebhookKeyPair();
  const body = '{"order":1}';
  // The package's verify() reads Date.now(): signed now, so it is within its tolerance.
  const headers = signWebhook([secretKey, secret], 'evt-1', Date.now(), body);
  assert.match(headers['webhook-signature']!, /^v1a,\S+ v1,\S+$/);
  assert.deepEqual(new Webhook(secret).verify(body, headers), { order: 1 });
  assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers), /No matching/);
});

test('v1a refusals: a tampered body or id, another key, a v1a signature under a v1 secret, bad bytes, an old timestamp', () => {
  const headers = signWebhook(V1A.secretKey, V1A.id, AT, V1A.payload);
  assert.equal(reason([V1A.publicKey], headers, '{"test": 2432232315}'), 'bad_signature');
  assert.equal(reason([V1A.publicKey], { ...headers, 'webhook-id': 'msg_other' }), 'bad_signature');
  assert.equal(reason([generateWebhookKeyPair().publicKey], headers), 'bad_signature');
  assert.equal(reason([V1.secret], headers), 'bad_signature', 'schemes do not cross');
  assert.equal(
    reason([V1A.publicKey], {
      ...headers,
      'webhook-signature': V1A.signature.replace('v1a,', 'v1,'),
    }),
    'bad_signature',
  );
  for (const forged of ['v1a,', 'v1a,!!!!', 'v1a,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc='])
    assert.equal(
      reason([V1A.publicKey], { ...headers, 'webhook-signature': forged }),
      'bad_signature',
      forged,
    );
  assert.equal(
    reason([V1A.publicKey], headers, V1A.payload, AT + 5 * 60_000 + 1000),
    'timestamp_too_old',
  );
  assert.equal(
    reason([V1A.publicKey], headers, V1A.payload, AT - 5 * 60_000 - 1000),
    'timestamp_too_new',
  );
});

test('keys are told apart by prefix; malformed ones and signing with a public key are refused without echoing the key', () => {
  assert.equal(webhookKeyKind(V1.secret), 'v1-secret');
  assert.equal(webhookKeyKind('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), 'v1-secret', 'bare base64');
  assert.equal(webhookKeyKind(V1A.secretKey), 'v1a-secret-key');
  assert.equal(webhookKeyKind(V1A.publicKey), 'v1a-public-key');
  const secretBody = 'VEVTVFNJR05JTkdLRVlET05PVFVTRVRIS';
  for (const bad of [
    `whsk_${secretBody}`,
    'whpk_AAAA',
    'whsec_not base64!',
    '',
    `whsk_${secretBody}x=`,
  ]) {
    assert.throws(
      () => webhookKeyKind(bad),
      (error: unknown) =>
        isInvalidOptionError(error) && !(error.message.includes(secretBody) && bad !== ''),
      JSON.stringify(bad),
    );
  }
  assert.throws(
    () => signWebhook(V1A.publicKey, 'evt', AT, '{}'),
    (error: unknown) =>
      isInvalidOptionError(error) && /public key only verifies/.test(error.message),
  );
  assert.throws(() => signWebhook([], 'evt', AT, '{}'), isInvalidOptionError);
});

test('generated keys are fresh and well formed: whsec_ of 32 bytes, a whsk_/whpk_ pair that signs and verifies', () => {
  const secret = generateWebhookSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.notEqual(secret, generateWebhookSecret());
  const pair = generateWebhookKeyPair();
  assert.match(pair.secretKey, /^whsk_[A-Za-z0-9+/]{43}=$/);
  assert.match(pair.publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/);
  const headers = signWebhook(pair.secretKey, 'evt-9', AT, '{}');
  assert.equal(reason([pair.publicKey], headers, '{}'), 'ok');
  assert.equal(reason([generateWebhookKeyPair().publicKey], headers, '{}'), 'bad_signature');
});
