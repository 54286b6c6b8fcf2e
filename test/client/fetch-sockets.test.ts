import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createClient } from '#oncely/client/fetch-client.js';
import { isRetryError, wasNeverSent } from '#oncely/client/retry-report.js';
import { startHookServer, type HookServer } from '#cli/receivers/hook/hook-server.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { systemClock } from '#oncely/time/clock.js';
import { seededRandom } from '#oncely/time/random.js';

// Real sockets on loopback. Time is virtual where it can be: the receiver and the client share
// one VirtualClock, so the hit list's gaps are exactly the waits the client chose.
const START = Date.UTC(2026, 8, 14, 12, 0, 0);
const BODY = JSON.stringify({ run_id: 'run-9', ok: true });

async function withHook<T>(
  options: Parameters<typeof startHookServer>[0],
  body: (hook: HookServer) => Promise<T>,
): Promise<T> {
  const hook = await startHookServer(options);
  try {
    return await body(hook);
  } finally {
    await hook.close();
  }
}

function gaps(instants: readonly number[]): number[] {
  return instants.slice(1).map((at, i) => at - instants[i]!);
}

test('the webhook storm over real sockets: 429 with Retry-After: 1 three times, then 200: four arrivals, one key, gaps >= 1 s', async () => {
  const clock = new VirtualClock({ startAt: START });
  await withHook({ script: '429@1x3,200', clock }, async (hook) => {
    const client = createClient({ clock, random: seededRandom(3), maxAttempts: 12 });
    const { response, report } = await client.request(`${hook.url}/hooks/run-complete`, {
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: 'run-9',
    });
    assert.equal(response.status, 200);
    const hits = await hook.service.hits();
    assert.equal(hits.length, 4);
    assert.deepEqual(
      new Set(hits.map((h) => h.key)),
      new Set(['"run-9"']),
      'one key, as an sf-string',
    );
    assert.equal(new Set(hits.map((h) => h.bodySha256)).size, 1, 'the same payload every time');
    for (const gap of gaps(hits.map((h) => h.at)))
      assert.ok(gap >= 1000, `gap ${gap} ms is shorter than Retry-After: 1`);
    assert.equal(report.attemptCount, 4);
    assert.equal(report.lastNon2xxStatus, 429);
    assert.deepEqual(
      report.attempts.map((a) => a.delayReason),
      ['retry-after', 'retry-after', 'retry-after', undefined],
    );
    assert.deepEqual(await hook.service.counts(), { arrivals: 4, completions: 1, replays: 0 });
  });
});

test('Retry-After as an HTTP-date from a receiver whose clock is an hour ahead: the client waits the intended 2 s', async () => {
  const clientClock = new VirtualClock({ startAt: START });
  const serverClock = new VirtualClock({ startAt: START + 3_600_000 });
  await withHook(
    { script: '503@2,200', clock: serverClock, retryAfterFormat: 'http-date' },
    async (hook) => {
      const client = createClient({
        clock: clientClock,
        random: seededRandom(1),
        retryAfterJitterRatio: 0,
      });
      const { report } = await client.request(`${hook.url}/h`, {
        method: 'POST',
        body: BODY,
        idempotencyKey: 'run-9',
      });
      assert.equal(report.attempts[0]?.delayMs, 2000);
      assert.equal(clientClock.now() - START, 2000);
      assert.equal((await hook.service.counts()).arrivals, 2);
    },
  );
});

test('a fatal 400 over the wire is sent exactly once', async () => {
  await withHook({ script: '400', clock: new VirtualClock({ startAt: START }) }, async (hook) => {
    const client = createClient({ clock: new VirtualClock({ startAt: START }), maxAttempts: 12 });
    await assert.rejects(
      client.request(`${hook.url}/h`, { method: 'POST', body: BODY, idempotencyKey: 'k' }),
      (e) => {
        assert.ok(isRetryError(e));
        assert.equal(e.report.stopReason, 'fatal_status');
        return true;
      },
    );
    assert.equal((await hook.service.counts()).arrivals, 1);
  });
});

test('a swallowed ack: the attempt is unknown, the retry under the same key is a replay, one completion', async () => {
  const clock = new VirtualClock({ startAt: START });
  await withHook({ script: 'swallow,200', clock }, async (hook) => {
    const client = createClient({ clock, random: seededRandom(2) });
    const { response, report } = await client.request(`${hook.url}/h`, {
      method: 'POST',
      body: BODY,
      idempotencyKey: 'run-9',
    });
    assert.deepEqual(
      report.attempts.map((a) => [a.outcome, a.status, a.transport]),
      [
        ['unknown', undefined, { sent: true, reason: 'socket_closed' }],
        ['ok', 200, undefined],
      ],
    );
    assert.equal(report.lastNon2xxStatus, undefined, 'no status the server never sent');
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await hook.service.counts(), { arrivals: 2, completions: 1, replays: 1 });
  });
});

test('a refused connection is "not sent" (nothing happened, retried even without a key), not a status', async () => {
  // Take a free port, then close it so nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address() as { port: number };
      probe.close(() => resolve(p));
    });
  });
  const client = createClient({ clock: new VirtualClock({ startAt: START }), maxAttempts: 2 });
  // No key on a POST: a retry would be unsafe after an answer, but nothing was sent.
  await assert.rejects(
    client.request(`http://127.0.0.1:${port}/h`, { method: 'POST', body: BODY }),
    (e) => {
      assert.ok(isRetryError(e));
      assert.equal(e.report.outcome, 'fail');
      assert.equal(e.report.stopReason, 'budget_exhausted');
      assert.equal(e.report.attemptCount, 2);
      assert.ok(wasNeverSent(e.report));
      assert.deepEqual(
        e.report.attempts.map((a) => [a.status, a.transport]),
        [
          [undefined, { sent: false, reason: 'connection_refused' }],
          [undefined, { sent: false, reason: 'connection_refused' }],
        ],
      );
      assert.match(e.report.attempts[0]?.detail ?? '', /ECONNREFUSED/);
      assert.match(e.message, /2 not sent \(connection refused\)/);
      return true;
    },
  );
});

test('real-time smoke: the same kind of script on the system clock waits its Retry-After, about 1 s', async () => {
  // One wait is the wiring check (the virtual-clock tests above cover the schedule): three
  // cost the suite 3 s of nothing.
  await withHook({ script: '429@1,200' }, async (hook) => {
    const client = createClient({ clock: systemClock, retryAfterJitterRatio: 0, maxAttempts: 5 });
    const { report } = await client.request(`${hook.url}/h`, {
      method: 'POST',
      body: BODY,
      idempotencyKey: 'run-9',
    });
    const hits = await hook.service.hits();
    assert.equal(hits.length, 2);
    // Node timers may fire a fraction of a millisecond early against Date.now(); allow 2 ms.
    for (const gap of gaps(hits.map((h) => h.at))) assert.ok(gap >= 998, `gap ${gap} ms`);
    assert.ok(
      report.totalSleptMs >= 998 && report.totalSleptMs < 2000,
      `slept ${report.totalSleptMs} ms`,
    );
  });
});
