import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fingerprint } from '#oncely/contract/fingerprint.js';
import { fingerprintOfPayload, payloadFingerprint } from '#oncely/http/payload-fingerprint.js';
import type { FingerprintInput } from '#oncely/http/request-fingerprint.js';
import { requestFingerprint } from '#oncely/http/request-fingerprint.js';

const input = (method: string, path: string): FingerprintInput => ({
  method,
  url: new URL(`http://app.test${path}`),
  headers: new Headers(),
  body: new Uint8Array(),
});

test('the payload is hashed as canonical JSON with the method and the path and query', () => {
  const post = input('post', '/orders?x=1');
  assert.equal(
    payloadFingerprint(post, { b: 1, a: 2 }),
    fingerprint({ method: 'POST', path: '/orders?x=1', payload: { a: 2, b: 1 } }),
    'key order does not matter (RFC 8785)',
  );
  assert.notEqual(payloadFingerprint(post, { a: 1 }), payloadFingerprint(post, { a: 2 }));
  assert.notEqual(
    payloadFingerprint(post, { a: 1 }),
    payloadFingerprint(input('PATCH', '/orders?x=1'), { a: 1 }),
  );
  assert.notEqual(
    payloadFingerprint(post, { a: 1 }),
    payloadFingerprint(input('POST', '/orders?x=2'), { a: 1 }),
  );
});

test('a payload returned as a promise is awaited, not hashed as an object', async () => {
  const post = input('POST', '/orders');
  const sync = payloadFingerprint(post, { a: 1 });
  assert.equal(await payloadFingerprint(post, Promise.resolve({ a: 1 })), sync);
  assert.notEqual(await payloadFingerprint(post, Promise.resolve({ a: 2 })), sync);
});

test('without payloadOf the given fingerprintOf is kept; with it, payloadOf decides', () => {
  assert.equal(fingerprintOfPayload(undefined, undefined, requestFingerprint), requestFingerprint);
  const of = fingerprintOfPayload(() => ({ kept: true }), undefined, requestFingerprint);
  assert.equal(
    of(input('POST', '/orders')),
    payloadFingerprint(input('POST', '/orders'), { kept: true }),
  );
});
