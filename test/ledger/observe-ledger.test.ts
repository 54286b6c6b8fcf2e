import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { trace } from '@opentelemetry/api';
import { attemptSpanEvents, ATTEMPT_SPAN_EVENT } from '#oncely/client/attempt-span-events.js';
import { createClient } from '#oncely/client/fetch-client.js';
import { createLedger, jsonReceipt, type InFlightEntry } from '#oncely/ledger/index.js';
import { ledgerSpanEvents, LEDGER_SPAN_EVENT } from '#oncely/ledger/ledger-span-events.js';
import { observeLedger, type LedgerDecision } from '#oncely/ledger/observe-ledger.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { seededRandom } from '#oncely/time/random.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { memoryTracer } from '../support/memory-tracer.js';

const START_AT = 1_700_000_000_000;

function setUp() {
  const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
  const store = createMemoryStore();
  const decisions: LedgerDecision[] = [];
  const ledger = observeLedger(createLedger({ store, clock, leaseMs: 30_000 }), (d) =>
    decisions.push(d),
  );
  return { clock, store, ledger, decisions };
}

test('observeLedger tells each decision: new with the effect time on the ledger clock, replay, conflict', async () => {
  const { clock, ledger, decisions } = setUp();
  const effect = async () => {
    await clock.advance(250); // the effect "takes" 250 ms of ledger time
    return jsonReceipt(201, { ok: true });
  };
  assert.equal(
    (await ledger.execute({ scope: 'alice', key: 'k-1', fingerprint: 'a' }, effect)).kind,
    'executed',
  );
  assert.equal(
    (await ledger.execute({ scope: 'alice', key: 'k-1', fingerprint: 'a' }, effect)).kind,
    'replayed',
  );
  assert.equal(
    (await ledger.execute({ scope: 'alice', key: 'k-1', fingerprint: 'b' }, effect)).kind,
    'conflict',
  );
  await assert.rejects(
    ledger.execute({ scope: 'alice', key: 'k-2', fingerprint: 'a' }, () =>
      Promise.reject(new Error('boom')),
    ),
    /boom/,
  );
  assert.deepEqual(
    decisions.map((d) => [d.kind, d.key, d.tookOver, d.effectMs]),
    [
      ['executed', 'k-1', false, 250],
      ['replayed', 'k-1', false, undefined],
      ['conflict', 'k-1', false, undefined],
      ['effect_failed', 'k-2', false, 0],
    ],
  );
});

test('observeLedger tells the decisions of deferred effects too, timing the handler', async () => {
  const { clock, ledger, decisions } = setUp();
  const effect = async () => {
    await clock.advance(40);
    return { receipt: jsonReceipt(201, { ok: true }), writes: [] };
  };
  const request = { scope: 'alice', key: 'd-1', fingerprint: 'a' };
  assert.equal((await ledger.executeDeferred(request, effect)).kind, 'executed');
  assert.equal((await ledger.executeDeferred(request, effect)).kind, 'replayed');
  await assert.rejects(
    ledger.executeDeferred({ ...request, key: 'd-2' }, () => Promise.reject(new Error('boom'))),
    /boom/,
  );
  assert.deepEqual(
    decisions.map((d) => [d.kind, d.key, d.effectMs]),
    [
      ['executed', 'd-1', 40],
      ['replayed', 'd-1', undefined],
      ['effect_failed', 'd-2', 0],
    ],
  );
});

test('observeLedger reports a lease takeover, and an observer that throws never fails the request', async () => {
  const { clock, store, ledger, decisions } = setUp();
  // A worker claimed k-9 and died: its in-flight row stays until the lease runs out.
  const dead: InFlightEntry = {
    scope: 'alice',
    key: 'k-9',
    fingerprint: 'a',
    state: 'in_flight',
    token: 'dead',
    firstSeenAt: START_AT,
    leaseExpiresAt: START_AT + 30_000,
    expiresAt: START_AT + 86_400_000,
  };
  assert.deepEqual(await store.claim(dead), { won: true });
  assert.equal(
    (
      await ledger.execute({ scope: 'alice', key: 'k-9', fingerprint: 'a' }, () =>
        jsonReceipt(201, {}),
      )
    ).kind,
    'in_flight',
  );
  await clock.advance(30_001);
  assert.equal(
    (
      await ledger.execute({ scope: 'alice', key: 'k-9', fingerprint: 'a' }, () =>
        jsonReceipt(201, {}),
      )
    ).kind,
    'executed',
  );
  assert.deepEqual(
    decisions.map((d) => [d.kind, d.tookOver]),
    [
      ['in_flight', false],
      ['executed', true],
    ],
  );

  const throwing = observeLedger(createLedger({ store: createMemoryStore(), clock }), () => {
    throw new Error('observer bug');
  });
  assert.equal(
    (
      await throwing.execute({ scope: 'alice', key: 'k-1', fingerprint: 'a' }, () =>
        jsonReceipt(201, {}),
      )
    ).kind,
    'executed',
  );
});

const tracer = memoryTracer();
after(() => tracer.shutdown());

test('each ledger decision becomes an event on the active span (OpenTelemetry)', async () => {
  const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
  const ledger = observeLedger(
    createLedger({ store: createMemoryStore(), clock }),
    ledgerSpanEvents(trace),
  );
  await tracer.inSpan('POST /orders', async () => {
    await ledger.execute({ scope: 'alice', key: 'order-1', fingerprint: 'a' }, () =>
      jsonReceipt(201, {}),
    );
    await ledger.execute({ scope: 'alice', key: 'order-1', fingerprint: 'a' }, () =>
      jsonReceipt(201, {}),
    );
  });
  // Outside any span nothing is recorded, and nothing fails.
  await ledger.execute({ scope: 'alice', key: 'order-1', fingerprint: 'b' }, () =>
    jsonReceipt(201, {}),
  );
  const span = tracer.finished().find((s) => s.name === 'POST /orders');
  assert.ok(span);
  assert.deepEqual(
    span.events.map((e) => [e.name, e.attributes]),
    [
      [
        LEDGER_SPAN_EVENT,
        {
          'oncely.ledger.outcome': 'executed',
          'oncely.idempotency_key': 'order-1',
          'oncely.ledger.took_over': false,
          'oncely.ledger.effect_ms': 0,
        },
      ],
      [
        LEDGER_SPAN_EVENT,
        {
          'oncely.ledger.outcome': 'replayed',
          'oncely.idempotency_key': 'order-1',
          'oncely.ledger.took_over': false,
        },
      ],
    ],
  );
});

test('each client attempt becomes an event on the active span (OpenTelemetry)', async () => {
  const answers = [503, 503, 201];
  const fetch = (async () =>
    new Response('x', { status: answers.shift()! })) as typeof globalThis.fetch;
  const client = createClient({
    fetch,
    clock: new VirtualClock({ startAt: START_AT }),
    random: seededRandom(1),
    onAttempt: attemptSpanEvents(trace),
  });
  await tracer.inSpan('deliver run-9', () =>
    client.request('http://hooks.test/run', {
      method: 'POST',
      body: '{}',
      idempotencyKey: 'run-9',
    }),
  );
  const span = tracer.finished().find((s) => s.name === 'deliver run-9');
  assert.ok(span);
  const events = span.events.map((e) => e.attributes ?? {});
  assert.deepEqual(
    span.events.map((e) => e.name),
    [ATTEMPT_SPAN_EVENT, ATTEMPT_SPAN_EVENT, ATTEMPT_SPAN_EVENT],
  );
  assert.deepEqual(
    events.map((a) => [
      a['oncely.attempt'],
      a['http.response.status_code'],
      a['oncely.attempt.outcome'],
    ]),
    [
      [1, 503, 'retry'],
      [2, 503, 'retry'],
      [3, 201, 'ok'],
    ],
  );
  assert.ok(
    events.slice(0, 2).every((a) => typeof a['oncely.attempt.delay_ms'] === 'number'),
    'the wait after each failed attempt is on its event',
  );
  assert.equal(events[2]!['oncely.attempt.delay_ms'], undefined);
});
