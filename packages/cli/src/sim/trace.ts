/**
 * What can happen to a message, in the order the trace records it:
 * - send: the sender dispatches attempt `attempt` of job `job`;
 * - request-lost: that request is lost before delivery (recorded at the send tick);
 * - effect: the request arrives and the receiver acts on it;
 * - suppressed: the request arrives, its key is alive, and the receiver replays instead of acting;
 * - receipt-sent: the receiver answers (after every effect and every suppressed repeat);
 * - receipt-lost: that receipt is lost after the request's arrival (recorded at the same tick);
 * - confirmed: a receipt reaches the sender (later receipts for a confirmed job are recorded too).
 */
export const TRACE_KINDS = [
  'send',
  'request-lost',
  'effect',
  'suppressed',
  'receipt-sent',
  'receipt-lost',
  'confirmed',
] as const;
export type TraceKind = (typeof TRACE_KINDS)[number];

/** One event. Jobs count from 0, attempts from 1. */
export interface TraceEvent {
  readonly tick: number;
  readonly kind: TraceKind;
  readonly job: number;
  readonly attempt: number;
}

/**
 * The trace as JSON, one event per line, keys in a fixed order: byte-identical for the same seed
 * and parameters (the golden files in test/apps/sim/golden are this text).
 */
export function formatTraceJson(trace: readonly TraceEvent[]): string {
  if (trace.length === 0) return '[]';
  const lines = trace.map(
    (e) => `  {"tick":${e.tick},"kind":"${e.kind}","job":${e.job},"attempt":${e.attempt}}`,
  );
  return `[\n${lines.join(',\n')}\n]`;
}
