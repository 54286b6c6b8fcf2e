import type { SpanEventAttributes } from '../contract/trace-api.js';
import type { IntentRecord } from './intent.js';
import type { AttemptResult } from './next-step.js';

/**
 * The part of an OpenTelemetry tracer the outbox worker uses: pass `trace.getTracer('oncely')`
 * of `@opentelemetry/api` 1.x (a structural slice, docs/design.md habit 4: oncely never imports
 * the package and runs without it).
 */
export interface AttemptTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: SpanEventAttributes },
  ): AttemptSpan;
}

export interface AttemptSpan {
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): unknown;
}

/** OpenTelemetry's SpanKind.CLIENT and SpanStatusCode.ERROR, as numbers (no import of the API). */
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/**
 * Starts the span of one attempt, a client span named as OpenTelemetry's HTTP conventions name
 * one (the method), and the `traceparent` header (W3C Trace Context, level 1) that makes it the
 * receiver's parent: a receiver whose HTTP server is instrumented continues the trace, and its
 * ledger's span events land in it. Each attempt is a span of its own; `oncely.key` (also the
 * `webhook-id`) ties the attempts of one message together.
 */
export function startAttemptSpan(
  tracer: AttemptTracer,
  intent: IntentRecord,
  attempt: number,
  url: string,
): { span: AttemptSpan; traceparent: string } {
  const span = tracer.startSpan(intent.method, {
    kind: SPAN_KIND_CLIENT,
    attributes: {
      'http.request.method': intent.method,
      'url.full': url,
      'oncely.key': intent.key,
      'oncely.attempt': attempt,
      ...(intent.endpoint ? { 'oncely.endpoint': intent.endpoint } : {}),
    },
  });
  const { traceId, spanId, traceFlags } = span.spanContext();
  const flags = (traceFlags & 0xff).toString(16).padStart(2, '0');
  return { span, traceparent: `00-${traceId}-${spanId}-${flags}` };
}

/** Ends the attempt's span with what came back: the status, or why nothing did. */
export function endAttemptSpan(span: AttemptSpan, result: AttemptResult): void {
  const o = result.observation;
  if (o.kind === 'response') {
    span.setAttribute('http.response.status_code', o.status);
    // OpenTelemetry's HTTP client convention: a 4xx or 5xx answer is an error of the client span.
    if (o.status >= 400) span.setStatus({ code: STATUS_ERROR });
  } else {
    const type = o.kind === 'failure' ? 'failure' : (o.reason ?? o.kind);
    span.setAttribute('error.type', type);
    span.setStatus({ code: STATUS_ERROR, message: o.detail });
  }
  span.end();
}
