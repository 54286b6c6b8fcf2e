import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { signWebhook, verifyWebhook } from '#oncely/contract/standard-webhooks.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** Sends `headers` to a node:http server on port 0 and returns the `req.headers` it saw. */
async function receivedHeaders(headers: Record<string, string>): Promise<IncomingHttpHeaders> {
  let seen: IncomingHttpHeaders = {};
  const server = createServer((req, res) => {
    seen = req.headers;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve, reject) =>
    request({ port, host: '127.0.0.1', method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', resolve);
    })
      .on('error', reject)
      .end('{}'),
  );
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return seen;
}

// Before: `verifyWebhook(keys, req.headers, …)` threw `headers.get is not a function`.
test("verifyWebhook takes node's req.headers as they come, as well as Headers", async () => {
  const now = Date.UTC(2026, 11, 7);
  const signed = signWebhook(SECRET, 'msg-1', now, '{}');
  const headers = await receivedHeaders(signed);
  assert.deepEqual(verifyWebhook([SECRET], headers, '{}', now), {
    ok: true,
    id: 'msg-1',
    timestampMs: now,
  });
  assert.equal(verifyWebhook([SECRET], new Headers(signed), '{}', now).ok, true);
  const tampered = verifyWebhook([SECRET], headers, '{"x":1}', now);
  assert.equal(tampered.ok, false);
  const { 'webhook-id': _id, ...withoutId } = headers;
  const missing = verifyWebhook([SECRET], withoutId, '{}', now);
  assert.deepEqual(missing.ok ? null : [missing.reason, missing.detail], [
    'missing_header',
    'missing webhook-id',
  ]);
});

test('a hand-made object matches names case-insensitively; a repeated field is joined', () => {
  const now = Date.UTC(2026, 11, 7);
  const signed = signWebhook(SECRET, 'msg-2', now, '{}');
  const mixed = {
    'Webhook-Id': signed['webhook-id']!,
    'WEBHOOK-TIMESTAMP': signed['webhook-timestamp']!,
    'webhook-signature': [signed['webhook-signature']!],
  };
  assert.equal(verifyWebhook([SECRET], mixed, '{}', now).ok, true);
});
