// Requests the server answers without a handler, or in a handler's place, still get their line in
// the request log, with the status the client got: a bad Host (400), a body that never came (408).
// (A newcomer's 503 during a shutdown: shutdown.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { sendRaw, parseResponse } from './hostile/hostile-harness.js';
import { startTestServer, TOKENS } from './server-harness.js';

test("the log has a line for a refused Host and for a 408 sent in the handler's place", async () => {
  const t = await startTestServer({ requestTimeoutMs: 1500, headersTimeoutMs: 1000 });
  try {
    const badHost = await sendRaw(
      t.port,
      `GET /anything HTTP/1.1\r\nHost: 127.0.0.1:${t.port}/healthz?\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(badHost.status, 400);
    assert.deepEqual(
      t.logLines
        .filter((line) => line['path'] === '/anything')
        .map((line) => [line['method'], line['status']]),
      [['GET', 400]],
      'logged under the target it asked for, never under the Host',
    );

    const stalled = await new Promise<ReturnType<typeof parseResponse>>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(t.port, '127.0.0.1', () =>
        socket.write(
          `POST /hooks/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKENS.dev}\r\nIdempotency-Key: slow-hook\r\nContent-Length: 50\r\n\r\n{"run`,
        ),
      );
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks))));
    });
    assert.equal(stalled.status, 408);
    // The handler finishes (its body read fails) after the 408 went out; its line follows.
    while (!t.logLines.some((line) => line['path'] === '/hooks/slow'))
      await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(t.logLines.find((line) => line['path'] === '/hooks/slow')?.['status'], 408);
    const hits = await fetch(`${t.url}/hooks/debug/hits`, {
      headers: { authorization: `Bearer ${TOKENS.dev}` },
    });
    assert.deepEqual(
      ((await hits.json()) as { hits: Array<{ status: number }> }).hits.map((hit) => hit.status),
      [408],
      'the hit says what was sent',
    );
  } finally {
    await t.close();
  }
});
