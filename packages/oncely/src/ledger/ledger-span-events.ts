import type { TraceApi } from '../contract/trace-api.js';
import type { LedgerObserver } from './observe-ledger.js';

/** The span event each ledger decision becomes. */
export const LEDGER_SPAN_EVENT = 'oncely.ledger.decision';

/**
 * An observer for {@link observeLedger} that adds one event to the active span per decision:
 * `observeLedger(ledger, ledgerSpanEvents(trace))` with `trace` from `@opentelemetry/api`. No
 * active span (tracing off, or the request is not traced): nothing happens. The caller's scope is
 * not recorded (it names an account); the key is, so a trace shows which intent it was.
 */
export function ledgerSpanEvents(trace: TraceApi): LedgerObserver {
  return (decision) => {
    trace.getActiveSpan()?.addEvent(LEDGER_SPAN_EVENT, {
      'oncely.ledger.outcome': decision.kind,
      'oncely.idempotency_key': decision.key,
      'oncely.ledger.took_over': decision.tookOver,
      ...(decision.effectMs === undefined ? {} : { 'oncely.ledger.effect_ms': decision.effectMs }),
    });
  };
}
