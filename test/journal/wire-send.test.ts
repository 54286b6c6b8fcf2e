// The outbox worker's own sender (wire-send.ts) against the path it replaces (the client over
// createNodeHttpFetch): over real sockets, each answer and each failure must come back as the
// same AttemptResult, so the journal records the same thing whichever path sent the attempt.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createNodeHttpFetch } from '#oncely/client/node-http-fetch.js';
import type { IntentRecord } from '#oncely/journal/intent.js';
import { prepareIntent } from '#oncely/journal/prepare-intent.js';
import { sendAttempt, MAX_RECEIPT_BYTES, type SendContext } from '#oncely/journal/send-attempt.js';
import { createWireSend } from '#oncely/journal/wire-send.js';
import { systemClock } from '#oncely/time/clock.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';

const big = Buffer.alloc(MAX_RECEIPT_BYTES + 10, 'x');
let stalled: () => void = () => {};
const routes: Record<string, (res: ServerResponse) => void> = {
  '/made': (res) => {
    res.setHeader('date', 'Mon, 07 Dec 2026 10:00:00 GMT');
    res.statusCode = 201;
    res.end('made');
  },
  '/empty': (res) => {
    res.statusCode = 204;
    res.end();
  },
  '/moved': (res) => {
    res.writeHead(301, { location: '/made' });
    res.end('moved');
  },
  '/busy': (res) => {
    res.setHeader('retry-after', ['7', '9']);
    res.setHeader('webhook-delivery', ' Disable ');
    res.statusCode = 503;
    res.end('busy');
  },
  '/big': (res) => res.end(big),
  '/cut': (res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
    res.socket?.destroy();
  },
  '/stall': (res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
    stalled();
  },
  '/swallow': (res) => res.socket?.destroy(),
};
const server = createServer((req, res) => {
  // The two paths' requests may straddle a second: node's own Date header would then differ.
  res.sendDate = false;
  req.resume();
  req.on('end', () => routes[req.url ?? '']?.(res));
});
let base = '';
let closedPort = 0;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const intentTo = (target: string, attemptTimeoutMs = 10_000): IntentRecord => ({
  ...prepareIntent({ key: 'order-7', target, body: '{"a":1}', attemptTimeoutMs }, 0),
  state: 'pending',
  attemptCount: 0,
  nextAttemptAt: 0,
  previousDelayMs: 0,
  sawUnknown: false,
  outcome: null,
});

/** The same attempt sent both ways, each on its own timer. */
async function bothWays(intent: IntentRecord, onTimers?: (timers: VirtualClock[]) => void) {
  const timers = [
    new VirtualClock({ autoAdvance: false }),
    new VirtualClock({ autoAdvance: false }),
  ];
  const context = (timer: VirtualClock): SendContext => ({
    fetch: createNodeHttpFetch(),
    clock: systemClock,
    timer,
    secretHeaders: {},
    signingSecret: undefined,
  });
  const sends = [
    sendAttempt(intent, context(timers[0]!)),
    sendAttempt(intent, {
      ...context(timers[1]!),
      wire: createWireSend(timers[1]!, MAX_RECEIPT_BYTES),
    }),
  ];
  onTimers?.(timers);
  const [client, wire] = await Promise.all(sends);
  // The duration is read off the real clock on each path: present on both, not compared.
  for (const result of [client!, wire!]) assert.ok(Number.isFinite(result.durationMs));
  return { client: { ...client!, durationMs: 0 }, wire: { ...wire!, durationMs: 0 } };
}

for (const path of ['/made', '/empty', '/moved', '/busy', '/big', '/cut', '/swallow']) {
  test(`${path}: the wire path records what the client path records`, async () => {
    const { client, wire } = await bothWays(intentTo(base + path));
    assert.deepEqual(wire, client);
  });
}

test('a refused connection and a target fetch must refuse are read alike', async () => {
  const refused = await bothWays(intentTo(`http://127.0.0.1:${closedPort}/hooks`));
  assert.equal(refused.wire.observation.kind, 'not_sent');
  assert.deepEqual(refused.wire, refused.client);
  // An endpoint's URL is checked when it is set; the intent's own target when it is recorded.
  const ftp = await bothWays({ ...intentTo(base), target: 'ftp://127.0.0.1/hooks' });
  assert.equal(ftp.wire.observation.kind, 'failure');
  assert.deepEqual(ftp.wire, ftp.client);
});

test('a receipt longer than the journal keeps is cut at MAX_RECEIPT_BYTES', async () => {
  const { wire } = await bothWays(intentTo(`${base}/big`));
  assert.equal(wire.body?.byteLength, MAX_RECEIPT_BYTES);
});

test('an answer that stalls past the attempt timeout is unknown, timed out, on both paths', async () => {
  let heads = 0;
  let timers: VirtualClock[] = [];
  const bothStalled = new Promise<void>((resolve) => {
    stalled = () => void (++heads === 2 && resolve());
  });
  const sent = bothWays(intentTo(`${base}/stall`, 500), (t) => (timers = t));
  await bothStalled;
  for (const timer of timers) await timer.advance(499);
  for (const timer of timers) await timer.advance(1);
  const { client, wire } = await sent;
  assert.equal(wire.observation.kind, 'unknown');
  assert.match(String((wire.observation as { detail?: string }).detail), /timed out after 500 ms/);
  assert.deepEqual(wire, client);
});
