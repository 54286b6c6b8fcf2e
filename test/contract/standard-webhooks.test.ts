import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signWebhook, verifyWebhook } from '#oncely/contract/standard-webhooks.js';

// The test vector of the Standard Webhooks reference libraries (standard-webhooks/standard-webhooks,
// libraries/javascript/src/index.test.ts, "test sign function").
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampS: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const headersOf = (record: Record<string, string>) => new Headers(record);

test('signs the reference vector exactly', () => {
  const headers = signWebhook(
    VECTOR.secret,
    VECTOR.id,
    VECTOR.timestampS * 1000 + 999,
    VECTOR.payload,
  );
  assert.deepEqual(headers, {
    'webhook-id': VECTOR.id,
    'webhook-timestamp': String(VECTOR.timestampS),
    'webhook-signature': VECTOR.signature,
  });
});

test('verifies the reference vector, also among several signatures and secrets (rotation)', () => {
  const now = VECTOR.timestampS * 1000 + 60_000;
  const headers = {
    'webhook-id': VECTOR.id,
    'webhook-timestamp': String(VECTOR.timestampS),
    'webhook-signature': VECTOR.signature,
  };
  assert.deepEqual(verifyWebhook([VECTOR.secret], headersOf(headers), VECTOR.payload, now), {
    ok: true,
    id: VECTOR.id,
    timestampMs: VECTOR.timestampS * 1000,
  });
  const rotated = {
    ...headers,
    'webhook-signature': `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,abc ${VECTOR.signature}`,
  };
  assert.equal(
    verifyWebhook(
      ['whsec_bm90IHRoZSBzZWNyZXQ=', VECTOR.secret],
      headersOf(rotated),
      VECTOR.payload,
      now,
    ).ok,
    true,
  );
});

test('refuses a tampered body, a wrong secret, an old or future timestamp, a missing header, a v2-only signature', () => {
  const now = VECTOR.timestampS * 1000;
  const headers: Record<string, string> = {
    'webhook-id': VECTOR.id,
    'webhook-timestamp': String(VECTOR.timestampS),
    'webhook-signature': VECTOR.signature,
  };
  const reason = (secrets: string[], h: Record<string, string>, body: string, at = now) => {
    const result = verifyWebhook(secrets, headersOf(h), body, at);
    return result.ok ? 'ok' : result.reason;
  };
  assert.equal(reason([VECTOR.secret], headers, '{"test": 2432232315}'), 'bad_signature');
  assert.equal(reason(['whsec_bm90IHRoZSBzZWNyZXQ='], headers, VECTOR.payload), 'bad_signature');
  assert.equal(
    reason([VECTOR.secret], { ...headers, 'webhook-id': 'msg_other' }, VECTOR.payload),
    'bad_signature',
  );
  assert.equal(
    reason([VECTOR.secret], headers, VECTOR.payload, now + 5 * 60_000 + 1000),
    'timestamp_too_old',
  );
  assert.equal(
    reason([VECTOR.secret], headers, VECTOR.payload, now - 5 * 60_000 - 1000),
    'timestamp_too_new',
  );
  assert.equal(
    reason([VECTOR.secret], headers, VECTOR.payload, now + 5 * 60_000),
    'ok',
    'exactly at the tolerance is still accepted',
  );
  for (const name of Object.keys(headers)) {
    const { [name]: _gone, ...rest } = headers;
    assert.equal(
      reason([VECTOR.secret], rest, VECTOR.payload),
      'missing_header',
      `without ${name}`,
    );
  }
  assert.equal(
    reason([VECTOR.secret], { ...headers, 'webhook-timestamp': '16142653e3' }, VECTOR.payload),
    'bad_timestamp',
  );
  assert.equal(
    reason(
      [VECTOR.secret],
      { ...headers, 'webhook-signature': VECTOR.signature.replace('v1,', 'v2,') },
      VECTOR.payload,
    ),
    'bad_signature',
  );
});
