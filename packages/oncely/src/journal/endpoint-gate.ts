import { PARKED_AT, type EndpointHealth, type EndpointRecord } from './endpoint.js';

/** How far ahead a worker reserves throttle slots, and sleeps for them while holding its lease. */
export const SLOT_HORIZON_MS = 1000;
/** A half-open probe holds the endpoint this long, in case its worker dies. */
export const PROBE_LEASE_MS = 60_000;
/** The rate of an endpoint without a limit while a 429, 502 or 504 slows it. */
export const SLOW_RATE_PER_SECOND = 10;

/** What the gate lets through: how many intents, and when the rest may come back. */
export interface Admission {
  readonly admitted: number;
  /** When intents not admitted are due again (PARKED_AT while paused or disabled). */
  readonly deferUntil: number;
}

/**
 * Asks the endpoint for up to `count` sends at `nowMs`: its state, the receiver's requested pause,
 * the breaker (open: none; half-open: one probe, taken here) and the throttle's room (free slots
 * `1000 / rate` apart, at most SLOT_HORIZON_MS ahead). Pure: the store runs it under the row's lock.
 */
export function admit(
  endpoint: EndpointRecord,
  nowMs: number,
  count: number,
): readonly [EndpointRecord | undefined, Admission] {
  const h = endpoint.health;
  if (endpoint.state !== 'active') return [undefined, { admitted: 0, deferUntil: PARKED_AT }];
  if (h.deferredUntil > nowMs) return [undefined, { admitted: 0, deferUntil: h.deferredUntil }];
  let health: EndpointHealth = h;
  let limit = count;
  if (h.breaker !== 'closed') {
    const probeFree =
      h.breaker === 'open'
        ? nowMs >= (h.openedAt ?? 0) + endpoint.settings.breaker.coolDownMs
        : (h.probeUntil ?? 0) <= nowMs;
    if (!probeFree) {
      const until =
        h.breaker === 'open'
          ? (h.openedAt ?? 0) + endpoint.settings.breaker.coolDownMs
          : Math.min(h.probeUntil ?? nowMs, nowMs + endpoint.settings.breaker.coolDownMs);
      return [undefined, { admitted: 0, deferUntil: until }];
    }
    // Half-open: exactly one probe goes through; its answer closes or reopens the breaker.
    health = { ...health, breaker: 'half_open', probeUntil: nowMs + PROBE_LEASE_MS };
    limit = 1;
  }
  // The throttle's capacity within the horizon; the slots themselves are taken by reserveSlots
  // once the attempts have started, just before sending, so a slow start cannot bunch sends.
  const spacing = slotSpacingMs(endpoint, nowMs);
  const start = Math.max(health.nextSlotAt, nowMs);
  const room =
    spacing === 0
      ? limit
      : Math.max(0, Math.floor((nowMs + SLOT_HORIZON_MS - start) / spacing) + 1);
  const admitted = Math.min(limit, room);
  const next = health === h ? undefined : { ...endpoint, health };
  const deferUntil = spacing === 0 ? nowMs : Math.max(nowMs + 1, start - SLOT_HORIZON_MS + spacing);
  return [next, { admitted, deferUntil }];
}

/**
 * Takes `count` throttle slots, `1000 / rate` apart, from the endpoint's next free one: the
 * instants to send at. Pure: the store runs it under the row's lock, so no two workers in any
 * process take one slot.
 */
export function reserveSlots(
  endpoint: EndpointRecord,
  nowMs: number,
  count: number,
): readonly [EndpointRecord | undefined, number[]] {
  const spacing = slotSpacingMs(endpoint, nowMs);
  if (spacing === 0) return [undefined, Array.from({ length: count }, () => nowMs)];
  const start = Math.max(endpoint.health.nextSlotAt, nowMs);
  const sendAt = Array.from({ length: count }, (_, i) => start + i * spacing);
  const health = { ...endpoint.health, nextSlotAt: start + count * spacing };
  return [{ ...endpoint, health }, sendAt];
}

/** Milliseconds between two sends at the endpoint's rate now (halved while slowed); 0 for none. */
export function slotSpacingMs(endpoint: EndpointRecord, nowMs: number): number {
  const rate = endpoint.settings.ratePerSecond;
  if (endpoint.health.slowUntil > nowMs)
    return 1000 / (rate === null ? SLOW_RATE_PER_SECOND : rate / 2);
  return rate === null ? 0 : 1000 / rate;
}
