import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CliIo } from '#cli/cli/cli-io.js';
import { runCli } from '#cli/cli/program.js';
import { createOutboxMetrics } from '#cli/outbox-api/outbox-metrics.js';
import { createJournal } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { tempDir } from '../../support/temp-dir.js';
import { startReceiver } from './outbox-api-fixture.js';

const TOKEN = 'metrics-token-0123456789';
const dir = tempDir('oncely-outbox-metrics-');

/** `oncely outbox serve --worker` in this process, stopped as SIGTERM would stop it. */
async function serveInProcess(args: readonly string[]) {
  let out = '';
  let stop: ((signal: string) => void) | undefined;
  let printed: () => void = () => {};
  const banner = new Promise<void>((resolve) => (printed = resolve));
  const io: CliIo = {
    out: (text) => {
      out += text;
      if (/metrics +http/.test(out)) printed();
    },
    err: (text) => void (out += text),
    exit: () => {},
    env: { ONCELY_TOKENS: `ops=${TOKEN}` },
    errIsTTY: false,
    onStop: (listener) => {
      stop = listener;
      return () => (stop = undefined);
    },
  };
  const exited = runCli(['outbox', 'serve', '--port', '0', '--no-dev-token', ...args], io);
  const early = await Promise.race([banner.then(() => undefined), exited]);
  if (early !== undefined) throw new Error(`outbox serve exited (${early}):\n${out}`);
  const origin = /outbox API: (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)?.[1];
  assert.ok(origin, out);
  return {
    origin,
    async stop() {
      stop?.('SIGTERM');
      return exited;
    },
  };
}

/** Every `# TYPE` line of an exposition: name -> type. */
const typesOf = (text: string) =>
  new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('metrics scraped from a real run of outbox serve --worker, named by Prometheus conventions', async () => {
  const receiver = await startReceiver();
  const server = await serveInProcess([
    '--worker',
    '--journal',
    join(dir, 'journal.db'),
    '--create',
  ]);
  try {
    const api = (path: string, body?: unknown, key?: string) =>
      fetch(`${server.origin}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          ...(key ? { 'idempotency-key': key } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const arrived = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (receiver.deliveries.length >= n ? resolve() : setImmediate(check));
        check();
      });
    for (const [id, path] of [
      ['shop', '/shop'],
      ['held', '/held'],
    ])
      await api('/v1/endpoints', { id, url: `${receiver.url}${path}` }, `add-${id}`);
    await api('/v1/endpoints/held/pause', {}, 'pause-held');
    await api('/v1/messages', { endpoint: 'shop', payload: { n: 1 } }, 'p1');
    await api('/v1/messages', { endpoint: 'shop', payload: { n: 2 } }, 'p2');
    await api('/v1/messages', { endpoint: 'held', payload: { n: 3 } }, 'p3');
    const refused = { url: `${receiver.url}/refuse`, body: 'x', maxAttempts: 1 };
    await api('/v1/messages', refused, 'p4');
    await arrived(3);
    // The answers are in; the settlements follow within a few turns: scrape until they are written.
    let text = '';
    for (let turn = 0; turn < 200; turn++) {
      text = await (await fetch(`${server.origin}/metrics`)).text();
      if (
        sample(text, 'oncely_outbox_messages_finished_total{endpoint="",state="refused"}') === 1 &&
        sample(text, 'oncely_outbox_attempts_total{endpoint="shop",outcome="ok"}') === 2
      )
        break;
    }
    assert.equal(
      sample(text, 'oncely_outbox_attempts_total{endpoint="shop",outcome="ok"}'),
      2,
      text,
    );
    assert.equal(sample(text, 'oncely_outbox_attempts_total{endpoint="",outcome="fail"}'), 1);
    assert.equal(
      sample(text, 'oncely_outbox_messages_finished_total{endpoint="shop",state="delivered"}'),
      2,
    );
    assert.equal(sample(text, 'oncely_outbox_attempt_duration_seconds_count{endpoint="shop"}'), 2);
    assert.equal(
      sample(text, 'oncely_outbox_attempt_duration_seconds_bucket{le="+Inf",endpoint="shop"}'),
      2,
    );
    assert.equal(sample(text, 'oncely_outbox_delivery_latency_seconds_count{endpoint="shop"}'), 2);
    assert.equal(
      sample(text, 'oncely_outbox_delivery_latency_seconds_count{endpoint=""}'),
      undefined,
    );
    assert.equal(sample(text, 'oncely_outbox_pending_messages'), 1, 'the held one');
    const age = sample(text, 'oncely_outbox_oldest_pending_age_seconds');
    assert.ok(age !== undefined && age >= 0 && age < 60, String(age));
    assert.equal(
      sample(text, 'oncely_outbox_endpoint_breaker_state{endpoint="shop",state="closed"}'),
      1,
    );
    assert.equal(
      sample(text, 'oncely_outbox_endpoint_breaker_state{endpoint="shop",state="open"}'),
      0,
    );
    assert.equal(sample(text, 'oncely_outbox_endpoint_state{endpoint="held",state="paused"}'), 1);
    assert.equal(sample(text, 'oncely_outbox_endpoint_state{endpoint="shop",state="active"}'), 1);

    // Prometheus naming (prometheus.io/docs/practices/naming): one prefix, snake_case, base units
    // (seconds, never ms), `_total` on counters and only there, a HELP for each.
    const types = typesOf(text);
    assert.deepEqual([...types.keys()].sort(), [
      'oncely_outbox_attempt_duration_seconds',
      'oncely_outbox_attempts_total',
      'oncely_outbox_delivery_latency_seconds',
      'oncely_outbox_endpoint_breaker_state',
      'oncely_outbox_endpoint_state',
      'oncely_outbox_messages_finished_total',
      'oncely_outbox_oldest_pending_age_seconds',
      'oncely_outbox_pending_messages',
    ]);
    for (const [name, type] of types) {
      assert.match(name, /^oncely_outbox_[a-z][a-z0-9_]*[a-z0-9]$/);
      assert.doesNotMatch(name, /(_ms|millis|milliseconds|_count|_sum|_bucket)$/, name);
      assert.equal(name.endsWith('_total'), type === 'counter', `${name}: ${type}`);
      if (type === 'histogram') assert.match(name, /_seconds$/);
      assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'));
    }
  } finally {
    assert.equal(await server.stop(), 0);
    await receiver.close();
  }
});

test('the queue gauges are read from the journal at scrape time, on its clock', async () => {
  const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
  const journal = createJournal({ store: createMemoryJournalStore(), clock });
  const metrics = createOutboxMetrics(journal, clock);
  const scrape = async () => (await metrics.respond()).text();
  assert.equal(sample(await scrape(), 'oncely_outbox_oldest_pending_age_seconds'), 0);
  await journal.record({ key: 'a', target: 'http://x.test/', body: '' });
  await clock.advance(90_000);
  await journal.record({ key: 'b', target: 'http://x.test/', body: '' });
  const text = await scrape();
  assert.equal(sample(text, 'oncely_outbox_pending_messages'), 2);
  assert.equal(sample(text, 'oncely_outbox_oldest_pending_age_seconds'), 90);
  await journal.cancel('a');
  assert.equal(sample(await scrape(), 'oncely_outbox_oldest_pending_age_seconds'), 0);
});

test('durations are in seconds: an attempt of 250 ms, a delivery two hours after its record', async () => {
  const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
  const metrics = createOutboxMetrics(
    createJournal({ store: createMemoryJournalStore(), clock }),
    clock,
  );
  const recordedAt = clock.now();
  await clock.advance(7_200_000);
  metrics.onSettled({
    key: 'k',
    state: 'delivered',
    attempt: 3,
    status: 200,
    detail: null,
    written: true,
    outcome: 'ok',
    endpoint: 'shop',
    durationMs: 250,
    recordedAt,
  });
  const text = await (await metrics.respond()).text();
  assert.equal(sample(text, 'oncely_outbox_attempt_duration_seconds_sum{endpoint="shop"}'), 0.25);
  assert.equal(sample(text, 'oncely_outbox_delivery_latency_seconds_sum{endpoint="shop"}'), 7200);
  const bucket = (le: string) =>
    sample(text, `oncely_outbox_delivery_latency_seconds_bucket{le="${le}",endpoint="shop"}`);
  assert.deepEqual([bucket('3600'), bucket('7200')], [0, 1]);
  assert.equal(sample(text, 'oncely_outbox_attempts_total{endpoint="shop",outcome="ok"}'), 1);
});
