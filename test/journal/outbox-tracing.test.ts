import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { VirtualClock, seededRandom } from '#oncely/time/index.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

test('each attempt is a client span; its traceparent reaches the receiver, which can continue it', async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('oncely');
  const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
  const store = createMemoryJournalStore();
  const journal = createJournal({ store, clock });
  const received: string[] = [];
  const statuses = [503, 200];
  const fetch = (async (_url: string | URL | Request, init?: RequestInit) => {
    const traceparent = new Headers(init?.headers).get('traceparent') ?? '';
    received.push(traceparent);
    // The receiver's side: its server span is a child of the attempt's (what OpenTelemetry's
    // HTTP instrumentation does with the header).
    const [, traceId, spanId] = TRACEPARENT.exec(traceparent) ?? [];
    if (traceId && spanId)
      tracer
        .startSpan(
          'receive',
          { kind: SpanKind.SERVER },
          trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: 1, isRemote: true }),
        )
        .end();
    return new Response('ok', { status: statuses[received.length - 1] ?? 200 });
  }) as typeof globalThis.fetch;
  await journal.record({
    key: 'order-7',
    target: 'http://receiver.test/hooks',
    body: '{}',
    headers: { traceparent: '00-stale' },
  });
  const worker = createOutboxWorker({ store, clock, random: seededRandom(1), fetch, tracer });
  await worker.resume();
  assert.equal((await journal.get('order-7'))?.state, 'delivered');

  const spans = exporter.getFinishedSpans();
  const attempts = spans.filter((s) => s.kind === SpanKind.CLIENT);
  assert.equal(attempts.length, 2);
  assert.deepEqual(
    received,
    attempts.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`),
    "each attempt sends its own span's traceparent, not the one recorded",
  );
  assert.deepEqual(
    attempts.map((s) => [
      s.name,
      s.attributes['oncely.attempt'],
      s.attributes['http.response.status_code'],
    ]),
    [
      ['POST', 1, 503],
      ['POST', 2, 200],
    ],
  );
  assert.equal(attempts[0]!.attributes['oncely.key'], 'order-7');
  assert.equal(attempts[0]!.attributes['url.full'], 'http://receiver.test/hooks');
  assert.deepEqual(
    attempts.map((s) => s.status.code),
    [SpanStatusCode.ERROR, SpanStatusCode.UNSET],
  );
  const served = spans.filter((s) => s.kind === SpanKind.SERVER);
  assert.deepEqual(
    served.map((s) => [s.spanContext().traceId, s.parentSpanContext?.spanId]),
    attempts.map((s) => [s.spanContext().traceId, s.spanContext().spanId]),
    'the receiver continues each attempt’s trace',
  );
  await provider.shutdown();
});

test('a lost answer ends the span as an error naming why; without a tracer no header is sent', async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
  const store = createMemoryJournalStore();
  const journal = createJournal({ store, clock });
  const headers: Headers[] = [];
  const failing = (async (_url: string | URL | Request, init?: RequestInit) => {
    headers.push(new Headers(init?.headers));
    throw Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
  }) as typeof globalThis.fetch;
  await journal.record({ key: 'k1', target: 'http://receiver.test/', body: '', maxAttempts: 1 });
  await createOutboxWorker({
    store,
    clock,
    random: seededRandom(1),
    fetch: failing,
    tracer: provider.getTracer('oncely'),
  }).resume();
  const [span] = exporter.getFinishedSpans();
  assert.equal(span?.status.code, SpanStatusCode.ERROR);
  assert.equal(typeof span?.attributes['error.type'], 'string');
  assert.equal(span?.attributes['http.response.status_code'], undefined);
  await journal.record({ key: 'k2', target: 'http://receiver.test/', body: '', maxAttempts: 1 });
  await createOutboxWorker({ store, clock, random: seededRandom(1), fetch: failing }).resume();
  assert.equal(headers.length, 2);
  assert.match(headers[0]!.get('traceparent') ?? '', TRACEPARENT);
  assert.equal(headers[1]!.get('traceparent'), null);
  assert.throws(() => createOutboxWorker({ store, tracer: {} as never }), /invalid option tracer/);
  await provider.shutdown();
});
