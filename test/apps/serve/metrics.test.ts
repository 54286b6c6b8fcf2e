import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt, type InFlightEntry } from '#oncely/ledger/index.js';
import { observeLedger } from '#oncely/ledger/observe-ledger.js';
import type { RequestLogLine } from '#cli/serve/request-log.js';
import { createServerMetrics } from '#cli/serve/server-metrics.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import {
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type TestServer,
} from './server-harness.js';

const START_AT = 1_700_000_000_000;

/** `name{labels} value` lines of a Prometheus text exposition, by series. */
function parseMetrics(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

describe('GET /metrics (Prometheus)', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  const scrape = async () => {
    const response = await send(t.port, { path: '/metrics' });
    assert.equal(response.status, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parseMetrics(response.text);
  };
  const submit = (key: string, body: string) =>
    send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.alice, key),
      body,
    });

  it('counts new, replayed and conflicting requests by service, with retries seen by key and effect latency', async () => {
    const before = await scrape();
    const series = (name: string) => (after: Map<string, number>) =>
      (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const newOnes = series('oncely_requests_total{service="dropbox",outcome="new"}');
    const replays = series('oncely_requests_total{service="dropbox",outcome="replay"}');
    const conflicts = series('oncely_requests_total{service="dropbox",outcome="conflict"}');
    const retriedReplays = series('oncely_retries_seen_total{service="dropbox",outcome="replay"}');
    const retriedConflicts = series(
      'oncely_retries_seen_total{service="dropbox",outcome="conflict"}',
    );
    const effects = series(
      'oncely_effect_duration_seconds_count{service="dropbox",result="executed"}',
    );
    assert.equal(
      before.get('oncely_requests_total{service="dropbox",outcome="new"}'),
      0,
      'every series starts at 0',
    );
    assert.equal(before.get('oncely_lease_takeovers_total{service="dropbox"}'), 0);
    assert.equal(before.get('oncely_sweep_rows_left'), 0, 'the retention sweep has nothing left');
    assert.equal(before.get('oncely_sweep_running'), 0);

    const lab3 = '{"student":"achen","assignment":"lab3"}';
    assert.equal((await submit('m-1', lab3)).status, 201);
    assert.equal((await submit('m-2', '{"student":"achen","assignment":"lab4"}')).status, 201);
    let now = await scrape();
    assert.deepEqual([newOnes(now), replays(now), conflicts(now), effects(now)], [2, 0, 0, 2]);

    assert.equal((await submit('m-1', lab3)).headers['idempotent-replayed'], 'true');
    assert.equal((await submit('m-1', lab3)).headers['idempotent-replayed'], 'true');
    assert.equal((await submit('m-1', '{"student":"achen","assignment":"lab9"}')).status, 422);
    now = await scrape();
    assert.deepEqual(
      [newOnes(now), replays(now), conflicts(now), effects(now)],
      [2, 2, 1, 2],
      'a replay or a conflict runs no effect',
    );
    assert.deepEqual([retriedReplays(now), retriedConflicts(now)], [2, 1]);
    // The metrics name no caller and no key.
    const text = (await send(t.port, { path: '/metrics' })).text;
    assert.doesNotMatch(text, /alice|m-1/);
  });

  it('the hook receiver counts too: its effects run on the same ledger', async () => {
    const hookRequest = () =>
      send(t.port, {
        method: 'POST',
        path: '/hooks/run-complete',
        headers: {
          authorization: `Bearer ${TOKENS.alice}`,
          'idempotency-key': 'run-m',
          'content-type': 'application/json',
        },
        body: '{"run_id":"run-m"}',
      });
    assert.equal((await hookRequest()).status, 200);
    assert.equal((await hookRequest()).status, 200);
    const now = await scrape();
    assert.equal(now.get('oncely_requests_total{service="hooks",outcome="new"}'), 1);
    assert.equal(now.get('oncely_requests_total{service="hooks",outcome="replay"}'), 1);
    assert.equal(
      now.get('oncely_effect_duration_seconds_count{service="hooks",result="executed"}'),
      1,
    );
  });

  it('answers 405 with Allow for another method', async () => {
    const response = await send(t.port, { method: 'POST', path: '/metrics', body: '' });
    assert.equal(response.status, 405);
    assert.equal(response.headers['allow'], 'GET, HEAD');
  });
});

describe('server metrics fed by a real ledger', () => {
  it('a duplicate in flight counts as in-flight and as a retry seen; a takeover after a dead lease counts once', async () => {
    const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
    const store = createMemoryStore();
    const metrics = createServerMetrics();
    const ledger = observeLedger(
      createLedger({ store, clock, leaseMs: 30_000 }),
      metrics.ledgerObserver('notes'),
    );
    const request = { scope: 'alice', key: 'edit-7', fingerprint: 'f' };
    // What the request log would write for each answer (its line carries the ledger's outcome).
    const line = (outcome: RequestLogLine['outcome']): RequestLogLine => ({
      at: '',
      method: 'PATCH',
      path: '/notes/note-1',
      key: 'edit-7',
      caller: 'alice',
      status: 0,
      durationMs: 0,
      outcome,
    });
    const dead: InFlightEntry = {
      ...request,
      state: 'in_flight',
      token: 'dead',
      firstSeenAt: START_AT,
      leaseExpiresAt: START_AT + 30_000,
      expiresAt: START_AT + 86_400_000,
    };
    await store.claim(dead);

    assert.equal((await ledger.execute(request, () => jsonReceipt(200, {}))).kind, 'in_flight');
    metrics.countRequest(line('in-flight'));
    await clock.advance(30_001);
    assert.equal((await ledger.execute(request, () => jsonReceipt(200, {}))).kind, 'executed');
    metrics.countRequest(line('new'));

    const scraped = parseMetrics(await (await metrics.respond()).text());
    assert.equal(scraped.get('oncely_requests_total{service="notes",outcome="in-flight"}'), 1);
    assert.equal(scraped.get('oncely_retries_seen_total{service="notes",outcome="in-flight"}'), 1);
    assert.equal(scraped.get('oncely_requests_total{service="notes",outcome="new"}'), 1);
    assert.equal(scraped.get('oncely_lease_takeovers_total{service="notes"}'), 1);
    assert.equal(scraped.get('oncely_lease_takeovers_total{service="dropbox"}'), 0);
  });
});
