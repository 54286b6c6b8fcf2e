import type { EndpointRecord } from 'oncely';

const iso = (ms: number): string => new Date(ms).toISOString();

/** An endpoint as the API shows it: secrets never (their count and expiries only), times ISO. */
export function endpointJson(e: EndpointRecord, nowMs: number): Record<string, unknown> {
  return {
    id: e.id,
    url: e.url,
    state: e.state,
    stateReason: e.stateReason,
    ratePerSecond: e.settings.ratePerSecond,
    breaker: e.settings.breaker,
    autoDisableAfterMs: e.settings.autoDisableAfterMs,
    eventTypes: e.settings.subscription.eventTypes,
    channels: e.settings.subscription.channels,
    health: {
      breaker: e.health.breaker,
      slowed: e.health.slowUntil > nowMs,
      deferredUntil: e.health.deferredUntil > nowMs ? iso(e.health.deferredUntil) : null,
      failingSince: e.health.failingSince === null ? null : iso(e.health.failingSince),
    },
    secrets: e.secrets.map((s) => ({ expiresAt: s.expiresAt === null ? null : iso(s.expiresAt) })),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}
