// The outbox worker's sender over real sockets: what goes out (method, headers, body), what comes
// back (status, headers, body), how it fails (refused, cut, aborted, timed out), and where it
// differs from globalThis.fetch on purpose (no redirect followed, no compression asked for).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createClient } from '#oncely/client/fetch-client.js';
import { createNodeHttpFetch } from '#oncely/client/node-http-fetch.js';
import { isRetryError } from '#oncely/client/retry-report.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  readonly socket: number;
}

const seen: Seen[] = [];
/** Called when /stall has sent the head of its answer. */
let stalled: () => void = () => {};
const sockets = new WeakMap<object, number>();
let nextSocket = 1;
/** Routes by path: each answers as its name says. */
const routes: Record<string, (res: ServerResponse, req: IncomingMessage) => void> = {
  '/echo': (res) => {
    res.setHeader('content-type', 'text/plain');
    res.setHeader('x-many', ['a', 'b']);
    res.statusCode = 201;
    res.end('made');
  },
  '/empty': (res) => {
    res.statusCode = 204;
    res.end();
  },
  '/moved': (res) => {
    res.statusCode = 301;
    res.setHeader('location', '/echo');
    res.end('moved');
  },
  '/cut': (res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
    res.socket?.destroy();
  },
  '/stall': (res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial'); // and never the rest
    stalled();
  },
  '/swallow': (res) => res.socket?.destroy(),
};
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (!sockets.has(req.socket)) sockets.set(req.socket, nextSocket++);
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks),
      socket: sockets.get(req.socket)!,
    });
    (routes[new URL(req.url ?? '/', 'http://x').pathname] ?? routes['/echo']!)(res, req);
  });
});
let base = '';
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const fetchNode = createNodeHttpFetch();

test('sends the method, every header and the body bytes; answers status, headers and body', async () => {
  seen.length = 0;
  const body = new Uint8Array([0, 1, 2, 250, 255]);
  const response = await fetchNode(`${base}/echo?q=1`, {
    method: 'POST',
    headers: new Headers([
      ['idempotency-key', 'k-1'],
      ['content-type', 'application/octet-stream'],
    ]),
    body,
  });
  assert.equal(response.status, 201);
  assert.equal(response.headers.get('content-type'), 'text/plain');
  assert.equal(response.headers.get('x-many'), 'a, b');
  assert.equal(await response.text(), 'made');
  const [request] = seen;
  assert.equal(request?.method, 'POST');
  assert.equal(request?.url, '/echo?q=1');
  assert.equal(request?.headers['idempotency-key'], 'k-1');
  assert.equal(request?.headers['content-length'], '5');
  assert.equal(request?.headers['accept-encoding'], undefined, 'no compression asked for');
  assert.deepEqual([...request!.body], [...body]);
});

test('a string body goes as UTF-8; a 204 and a HEAD have no body; connections are reused', async () => {
  seen.length = 0;
  await (await fetchNode(`${base}/echo`, { method: 'PUT', body: 'é€' })).arrayBuffer();
  const empty = await fetchNode(`${base}/empty`, { method: 'DELETE' });
  assert.equal(empty.status, 204);
  assert.equal(empty.body, null);
  const head = await fetchNode(`${base}/echo`, { method: 'HEAD' });
  assert.equal(head.status, 201);
  assert.equal(await head.text(), '');
  assert.equal(seen[0]?.body.toString('utf8'), 'é€');
  assert.equal(new Set(seen.map((s) => s.socket)).size, 1, 'one keep-alive connection for all');
});

test('a redirect is the answer, not followed (a POST must not become a GET)', async () => {
  seen.length = 0;
  const response = await fetchNode(`${base}/moved`, { method: 'POST', body: '{}' });
  assert.equal(response.status, 301);
  assert.equal(response.headers.get('location'), '/echo');
  assert.equal(seen.length, 1);
});

test('what it cannot send as bytes goes to globalThis.fetch', async () => {
  seen.length = 0;
  const form = new FormData();
  form.set('a', '1');
  const response = await fetchNode(`${base}/echo`, { method: 'POST', body: form });
  assert.equal(response.status, 201);
  assert.match(String(seen[0]?.headers['content-type']), /^multipart\/form-data/);
});

test('an abort rejects with the signal’s reason, before or during the answer', async () => {
  const early = new AbortController();
  early.abort(new DOMException('stop', 'AbortError'));
  await assert.rejects(fetchNode(`${base}/echo`, { signal: early.signal }), { name: 'AbortError' });
  const late = new AbortController();
  const answering = new Promise<void>((resolve) => (stalled = resolve));
  const pending = fetchNode(`${base}/stall`, { signal: late.signal });
  await answering;
  late.abort(new DOMException('too slow', 'TimeoutError'));
  await assert.rejects(pending, { name: 'TimeoutError', message: 'too slow' });
});

test('through the client: refused is not sent, a cut body and a swallowed ack are sent with no answer', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as AddressInfo;
      probe.close(() => resolve(p));
    });
  });
  const client = createClient({
    fetch: fetchNode,
    clock: new VirtualClock({ startAt: 0 }),
    maxAttempts: 1,
  });
  const transportOf = async (url: string): Promise<unknown> => {
    const error: unknown = await client
      .request(url, { method: 'POST', body: '{}', idempotencyKey: 'k' })
      .then(
        () => assert.fail('answered'),
        (e: unknown) => e,
      );
    assert.ok(isRetryError(error));
    return error.report.attempts[0]?.transport;
  };
  assert.deepEqual(await transportOf(`http://127.0.0.1:${port}/`), {
    sent: false,
    reason: 'connection_refused',
  });
  assert.deepEqual(await transportOf(`${base}/cut`), { sent: true, reason: 'socket_closed' });
  assert.deepEqual(await transportOf(`${base}/swallow`), { sent: true, reason: 'socket_closed' });
});
