import type { TraceApi } from '../contract/trace-api.js';
import type { AttemptRecord } from './retry-report.js';

/** The span event each client attempt becomes. */
export const ATTEMPT_SPAN_EVENT = 'oncely.client.attempt';

/**
 * An `onAttempt` hook that adds one event to the active span per attempt:
 * `createClient({ onAttempt: attemptSpanEvents(trace) })` (or `retry(op, { onAttempt })`) with
 * `trace` from `@opentelemetry/api`. The span is the caller's own (the one around the intent),
 * so its events list every attempt of that intent, with the wait chosen after each.
 */
export function attemptSpanEvents(trace: TraceApi): (record: AttemptRecord) => void {
  return (record) => {
    trace.getActiveSpan()?.addEvent(ATTEMPT_SPAN_EVENT, {
      'oncely.attempt': record.attempt,
      'oncely.attempt.outcome': record.outcome,
      // An attempt not timed (`timings: false`) has no duration: the attribute is left out.
      ...(Number.isNaN(record.endedAt - record.startedAt)
        ? {}
        : { 'oncely.attempt.duration_ms': record.endedAt - record.startedAt }),
      ...(record.status === undefined ? {} : { 'http.response.status_code': record.status }),
      ...(record.detail === undefined ? {} : { 'oncely.attempt.detail': record.detail }),
      ...(record.delayMs === undefined ? {} : { 'oncely.attempt.delay_ms': record.delayMs }),
      ...(record.delayReason === undefined
        ? {}
        : { 'oncely.attempt.delay_reason': record.delayReason }),
    });
  };
}
