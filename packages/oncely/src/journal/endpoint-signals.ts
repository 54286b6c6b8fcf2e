import { parseRetryAfter } from '../contract/retry-after.js';
import { freshHealth, type EndpointHealth, type EndpointRecord } from './endpoint.js';
import { DEFAULT_OUTBOX_POLICY } from './outbox-policy.js';

/** How long a 429, 502 or 504 halves the endpoint's rate. */
export const SLOW_FOR_MS = 60_000;
/** Statuses that say "too much, slow down". */
const SLOW_DOWN = new Set([429, 502, 504]);

/** One attempt's answer as the endpoint sees it. */
export interface EndpointAnswer {
  /** Null for a transport failure (no answer). */
  readonly status: number | null;
  readonly retryAfter: string | null;
  readonly date: string | null;
  /** The `webhook-delivery` response header, lower case. */
  readonly hint: string | null;
  /**
   * When the attempt ended: a Retry-After holds the endpoint from this instant, the one its
   * intent's next attempt is counted from, so both show one instant. @default the pass's nowMs
   */
  readonly at?: number | undefined;
}

/**
 * What the answers of one pass do to the endpoint: the breaker's window and transitions (closed →
 * open on the failure ratio, half-open → closed on a success, → open on a failure), the
 * receiver's signals (410 and `webhook-delivery: disable` disable it, 429/502/504 slow it,
 * Retry-After pauses it) and the auto-disable after only failures for `autoDisableAfterMs`.
 * Returns the row to write and, when this pass disabled it, why. Pure.
 */
export function observeAnswers(
  endpoint: EndpointRecord,
  nowMs: number,
  answers: readonly EndpointAnswer[],
): readonly [EndpointRecord, string | null] {
  const { breaker, autoDisableAfterMs } = endpoint.settings;
  let h: EndpointHealth = endpoint.health;
  let disabledBecause: string | null = null;
  for (const answer of answers) {
    const ok = answer.status !== null && answer.status >= 200 && answer.status < 300;
    if (nowMs - h.windowStart >= breaker.windowMs)
      h = { ...h, windowStart: nowMs, requests: 0, failures: 0 };
    h = { ...h, requests: h.requests + 1, failures: h.failures + (ok ? 0 : 1) };
    if (ok) {
      h = { ...h, failingSince: null };
      if (h.breaker !== 'closed')
        h = {
          ...freshHealth(nowMs),
          nextSlotAt: h.nextSlotAt,
          slowUntil: h.slowUntil,
          deferredUntil: h.deferredUntil,
        };
    } else {
      h = { ...h, failingSince: h.failingSince ?? nowMs };
      const tripped =
        h.breaker === 'half_open' ||
        (h.breaker === 'closed' &&
          h.requests >= breaker.minRequests &&
          h.failures / h.requests >= breaker.failureRatio);
      if (tripped) h = { ...h, breaker: 'open', openedAt: nowMs, probeUntil: null };
    }
    if (answer.status !== null && SLOW_DOWN.has(answer.status))
      h = { ...h, slowUntil: nowMs + SLOW_FOR_MS };
    const at = answer.at ?? nowMs;
    const pauseMs = retryAfterMs(answer, at, maxHoldMs(endpoint));
    if (pauseMs > 0) h = { ...h, deferredUntil: Math.max(h.deferredUntil, at + pauseMs) };
    disabledBecause ??= disableReason(answer, ok, h, nowMs, autoDisableAfterMs);
  }
  const next: EndpointRecord =
    disabledBecause === null || endpoint.state !== 'active'
      ? { ...endpoint, health: h, updatedAt: nowMs }
      : {
          ...endpoint,
          health: h,
          state: 'disabled',
          stateReason: disabledBecause,
          updatedAt: nowMs,
        };
  return [next, endpoint.state === 'active' ? disabledBecause : null];
}

function disableReason(
  answer: EndpointAnswer,
  ok: boolean,
  h: EndpointHealth,
  nowMs: number,
  autoDisableAfterMs: number,
): string | null {
  if (answer.status === 410) return 'the receiver answered 410 Gone';
  if (answer.hint === 'disable') return 'the receiver answered webhook-delivery: disable';
  if (!ok && h.failingSince !== null && nowMs - h.failingSince >= autoDisableAfterMs)
    return `only failures since ${new Date(h.failingSince).toISOString()}`;
  return null;
}

/**
 * The longest a Retry-After holds the endpoint: its intents' own limit (EndpointRetry), so an
 * intent that waits and the endpoint it waits on agree. A longer one holds it that long, while
 * the intents that were asked to wait longer stop (`retry_after_too_long`), never come back early.
 */
function maxHoldMs(endpoint: EndpointRecord): number {
  return endpoint.settings.retry?.maxRetryAfterMs ?? DEFAULT_OUTBOX_POLICY.maxRetryAfterMs;
}

function retryAfterMs(answer: EndpointAnswer, nowMs: number, maxMs: number): number {
  if (answer.retryAfter === null) return 0;
  const parsed = parseRetryAfter(answer.retryAfter, nowMs, answer.date);
  return parsed.kind === 'delay' ? Math.min(parsed.delayMs, maxMs) : 0;
}
