import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT_CONTEXT, SpanKind, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createJournal, createOutboxWorker } from '#oncely/journal/index.js';
import { createLedger, observeLedger } from '#oncely/ledger/index.js';
import { LEDGER_SPAN_EVENT, ledgerSpanEvents } from '#oncely/ledger/ledger-span-events.js';
import { idempotentListener } from '#oncely/http/adapters/node-idempotency.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { tempDir } from '../support/temp-dir.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * "The receiver's ledger continues the trace" (docs/outbox.md, "Tracing"): the outbox sends each
 * attempt's traceparent; a receiver built on oncely's ledger and node middleware, with its server
 * span made from that header (as OpenTelemetry's HTTP instrumentation does), records the ledger's
 * decision on that span: in the sender's trace, under the attempt that carried it.
 */
const contextManager = new AsyncLocalStorageContextManager();
before(() => {
  context.setGlobalContextManager(contextManager.enable());
});
after(() => {
  context.disable();
});

test("the receiver's ledger decisions land on spans that continue each attempt's trace", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('oncely-test');
  const file = join(tempDir('oncely-trace-receiver-'), 'receiver.db');
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  const ledger = observeLedger(createLedger({ store }), ledgerSpanEvents(trace));
  const handle = idempotentListener({ ledger }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  // The receiver's server span: a child of the remote span the traceparent names, active while
  // the request is handled (its context follows the ledger's awaits).
  const server = createServer((req, res) => {
    const [, traceId, spanId] = TRACEPARENT.exec(String(req.headers.traceparent ?? '')) ?? [];
    const parent =
      traceId && spanId
        ? trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: 1, isRemote: true })
        : ROOT_CONTEXT;
    const span = tracer.startSpan('POST /hooks', { kind: SpanKind.SERVER }, parent);
    res.on('finish', () => span.end());
    context.with(trace.setSpan(parent, span), () => void handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  try {
    const journal = createJournal({ store: createMemoryJournalStore() });
    const keys = Array.from({ length: 8 }, (_, i) => `order-${i}`);
    for (const key of keys) await journal.record({ key, target: url, body: `{"n":"${key}"}` });
    // Sent together (one batch): the receiver handles them at once, its writes grouped.
    await createOutboxWorker({ store: journal.store, tracer, batchSize: 8 }).resume();
    // One of them again, as a replayed message: the ledger answers from its receipt.
    await journal.endpoints.list(); // (the journal is still open)

    const spans = exporter.getFinishedSpans();
    const attempts = new Map(
      spans
        .filter((s) => s.kind === SpanKind.CLIENT)
        .map((s) => [s.spanContext().spanId, s] as const),
    );
    const served = spans.filter((s) => s.kind === SpanKind.SERVER);
    assert.equal(served.length, keys.length);
    for (const span of served) {
      const attempt = attempts.get(span.parentSpanContext?.spanId ?? '');
      assert.ok(attempt, 'each server span is the child of an attempt span');
      assert.equal(span.spanContext().traceId, attempt.spanContext().traceId, 'one trace');
      const decisions = span.events.filter((e) => e.name === LEDGER_SPAN_EVENT);
      assert.deepEqual(
        decisions.map((e) => [
          e.attributes?.['oncely.ledger.outcome'],
          e.attributes?.['oncely.idempotency_key'],
        ]),
        [['executed', attempt.attributes['oncely.key']]],
        'its own request’s decision, and only that one',
      );
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  }
});
