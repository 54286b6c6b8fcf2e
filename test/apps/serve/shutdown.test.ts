// A shutdown never answers with a bare reset. While it drains, the server keeps answering: a new
// request on a kept-alive connection gets 503 problem+json with Retry-After and Connection: close,
// and a request in flight finishes (its answer closes its connection). At the end of the grace,
// a request still running gets the same 503, and nothing it did is kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallers } from '#cli/serve/callers.js';
import { DEFAULT_SERVER_OPTIONS, startServer } from '#cli/serve/start-server.js';
import { parseResponse } from './hostile/hostile-harness.js';
import {
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type RawResponse,
} from './server-harness.js';

const LAB3 = '{"student":"achen","assignment":"lab3"}';
const submissionHead = (key: string): string =>
  `POST /dropbox/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKENS.dev}\r\nIdempotency-Key: ${key}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${LAB3.length}\r\n\r\n`;

/** A connection that reads one answer at a time; `next()` resolves once a whole answer is in. */
function connection(
  port: number,
): Promise<{ socket: Socket; next(): Promise<RawResponse>; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    let waiter: (() => void) | undefined;
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, next, closed }));
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      waiter?.();
    });
    socket.on('close', () => waiter?.());
    function complete(): number | undefined {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (length)
        return buffer.length >= end + 4 + Number(length[1])
          ? end + 4 + Number(length[1])
          : undefined;
      const last = buffer.indexOf('\r\n0\r\n\r\n', end);
      return last < 0 ? undefined : last + 7;
    }
    function next(): Promise<RawResponse> {
      return new Promise((done, fail) => {
        const check = (): void => {
          const size = complete();
          if (size !== undefined) {
            waiter = undefined;
            const answer = parseResponse(buffer.subarray(0, size));
            buffer = buffer.subarray(size);
            done(answer);
          } else if (socket.destroyed)
            fail(
              new Error(
                `the connection closed without an answer: ${buffer.toString('latin1').slice(0, 200)}`,
              ),
            );
        };
        waiter = check;
        check();
      });
    }
  });
}

function assertShuttingDown(answer: RawResponse): void {
  assert.equal(answer.status, 503, answer.text);
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/);
  assert.equal(answer.json<{ code: string }>().code, 'shutting_down');
  assert.equal(answer.headers['retry-after'], '1');
  assert.equal(answer.headers['connection'], 'close');
}

test('during the drain: a kept-alive connection gets 503 + Retry-After + Connection: close; the request in flight finishes with 201', async () => {
  const t = await startTestServer({ graceMs: 10_000, settleMs: DEFAULT_SERVER_OPTIONS.settleMs });
  try {
    const idle = await connection(t.port);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal((await idle.next()).status, 200, 'kept alive after a first answer');

    // In flight: the headers are in, the body is not.
    const busy = await connection(t.port);
    busy.socket.write(submissionHead('drain-1'));
    while (t.server.inFlight() < 1) await new Promise<void>((resolve) => setImmediate(resolve));

    const closing = t.server.close();
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assertShuttingDown(await idle.next());
    await idle.closed;

    busy.socket.write(LAB3);
    const accepted = await busy.next();
    assert.equal(accepted.status, 201, accepted.text);
    assert.equal(
      accepted.headers['connection'],
      'close',
      'an answer during the drain closes its connection',
    );
    assert.deepEqual(await closing, { drained: true });
    assert.deepEqual(
      t.logLines.filter((line) => line['path'] === '/healthz').map((line) => line['status']),
      [200, 503],
      'the 503 of the drain has its log line',
    );
  } finally {
    await t.close();
  }
});

test('at the end of the grace: the request still running gets the same 503, and nothing of it is kept', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'oncely-grace-'));
  const callers = createCallers({ devToken: TOKENS.dev });
  try {
    const server = await startServer({
      port: 0,
      dataDir,
      callers,
      graceMs: 150,
      requestTimeoutMs: 60_000,
    });
    const stuck = await connection(server.port);
    stuck.socket.write(`${submissionHead('grace-1')}{"student":"achen",`);
    while (server.inFlight() < 1) await new Promise<void>((resolve) => setImmediate(resolve));
    const closing = server.close();
    assertShuttingDown(await stuck.next());
    assert.deepEqual(await closing, { drained: false });

    const again = await startServer({ port: 0, dataDir, callers });
    try {
      const rows = await send(again.port, {
        path: '/dropbox/store',
        headers: { authorization: `Bearer ${TOKENS.dev}` },
      });
      assert.equal(rows.json<{ total: number }>().total, 0);
      const retry = await send(again.port, {
        method: 'POST',
        path: '/dropbox/submissions',
        headers: submissionHeaders(TOKENS.dev, 'grace-1'),
        body: LAB3,
      });
      assert.equal(
        retry.status,
        201,
        'the retry with the same key runs: the cut request left no receipt',
      );
    } finally {
      await again.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
