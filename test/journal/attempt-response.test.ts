import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ATTEMPT_BODY_BYTES,
  ATTEMPT_HEADER_COUNT,
  ATTEMPT_HEADER_VALUE_CHARS,
  boundedResponse,
  captureResponse,
} from '#oncely/journal/attempt-response.js';

test('a response within the bounds is kept whole, names lower case, repeats joined', () => {
  const headers = new Headers([
    ['X-Reason', 'busy'],
    ['set-cookie', 'a=1'],
    ['set-cookie', 'b=2'],
  ]);
  const kept = boundedResponse(headers, new TextEncoder().encode('{"ok":false}'));
  assert.deepEqual(kept.headers, { 'x-reason': 'busy', 'set-cookie': 'a=1, b=2' });
  assert.equal(new TextDecoder().decode(kept.body), '{"ok":false}');
  assert.equal(kept.truncated, false);
});

test('the body is cut at 4 KiB, a header value at 1,024 characters, the headers at 64', () => {
  const body = new Uint8Array(ATTEMPT_BODY_BYTES + 1).fill(0xff);
  assert.equal(ATTEMPT_BODY_BYTES, 4096);
  const cutBody = boundedResponse(new Headers(), body);
  assert.deepEqual([cutBody.body.byteLength, cutBody.truncated], [ATTEMPT_BODY_BYTES, true]);
  const exact = boundedResponse(new Headers(), body.subarray(0, ATTEMPT_BODY_BYTES));
  assert.equal(exact.truncated, false, 'exactly 4 KiB is not cut');

  const long = boundedResponse(
    new Headers({ 'x-long': 'v'.repeat(ATTEMPT_HEADER_VALUE_CHARS + 1) }),
    new Uint8Array(0),
  );
  assert.deepEqual(
    [long.headers['x-long']?.length, long.truncated],
    [ATTEMPT_HEADER_VALUE_CHARS, true],
  );

  const many = new Headers();
  for (let i = 0; i < ATTEMPT_HEADER_COUNT + 5; i++)
    many.set(`x-h${String(i).padStart(3, '0')}`, 'v');
  const first = boundedResponse(many, new Uint8Array(0));
  assert.deepEqual(
    [Object.keys(first.headers).length, first.truncated],
    [ATTEMPT_HEADER_COUNT, true],
  );
});

test('a body that cannot be read leaves the headers, an empty body, no throw', async () => {
  const response = new Response('once', { headers: { 'x-reason': 'read' } });
  await response.text(); // used up
  const { bytes, captured } = await captureResponse(response);
  assert.equal(bytes.byteLength, 0);
  assert.deepEqual([captured.headers['x-reason'], captured.body.byteLength], ['read', 0]);
});
