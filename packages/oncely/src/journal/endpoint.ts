import type { RotatingSecret } from '../contract/secret-rotation.js';
import type { FinalRecord } from './intent.js';
import type { Subscription } from './subscription.js';

/**
 * An endpoint: a receiver the outbox sends to, kept as a row in the journal's database so every
 * worker in every process honours the same state, throttle and breaker (Svix's endpoints).
 */
export const ENDPOINT_STATES = ['active', 'paused', 'disabled'] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

/** An endpoint's signing secret and when it stops signing; every unexpired one signs each attempt. */
export type EndpointSecret = RotatingSecret;

/** When the breaker opens, and how long it stays open before one probe goes through. */
export interface BreakerSettings {
  /** Opens when failures / requests reach this within a window. @default 0.5 */
  readonly failureRatio: number;
  /** @default 30000 */
  readonly windowMs: number;
  /** No verdict on fewer requests than this in a window. @default 10 */
  readonly minRequests: number;
  /** Open this long, then half-open: one probe goes through. @default 10000 */
  readonly coolDownMs: number;
}

/**
 * An endpoint's own retry settings: its intents take each one they do not give themselves, over
 * DEFAULT_OUTBOX_POLICY (docs/outbox.md, "Retry schedule"). Read when an intent is recorded.
 */
export interface EndpointRetry {
  /** Waits in ms between attempts, the last one repeating. */
  readonly schedule?: readonly number[] | undefined;
  /** Attempts in all, the first included. */
  readonly maxAttempts?: number | undefined;
  /** The longest computed wait; a schedule step above it is refused. */
  readonly maxDelayMs?: number | undefined;
  /**
   * The longest Retry-After obeyed, by the intents and by the endpoint's hold alike, so the two
   * show one instant. @default Infinity (up to each intent's deadline)
   */
  readonly maxRetryAfterMs?: number | undefined;
}

export interface EndpointSettings {
  /** Messages per second across every worker; null for no limit. */
  readonly ratePerSecond: number | null;
  readonly breaker: BreakerSettings;
  /** Disabled after only failures for this long (Svix: 5 days). */
  readonly autoDisableAfterMs: number;
  /** The published messages it gets (`journal.publish`): by event type and channel. */
  readonly subscription: Subscription;
  /** Its intents' retry settings; absent on rows of an earlier oncely (the outbox's defaults). */
  readonly retry?: EndpointRetry | undefined;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** What the workers learn as they send: written under the row's lock, read by every worker. */
export interface EndpointHealth {
  /** The next free send slot of the throttle (ms). */
  readonly nextSlotAt: number;
  /** The receiver asked for a pause (Retry-After): nothing is sent before this. */
  readonly deferredUntil: number;
  /** A 429, 502 or 504 came back: sent at half the rate until this. */
  readonly slowUntil: number;
  readonly breaker: BreakerState;
  readonly openedAt: number | null;
  /** Half-open: the probe in flight holds the endpoint until this. */
  readonly probeUntil: number | null;
  readonly windowStart: number;
  readonly requests: number;
  readonly failures: number;
  /** The first failure since the last success; null after a success. */
  readonly failingSince: number | null;
}

export interface EndpointRecord {
  readonly id: string;
  readonly url: string;
  readonly secrets: readonly EndpointSecret[];
  readonly state: EndpointState;
  /** Why it is paused or disabled (by whom, or the receiver's signal). */
  readonly stateReason: string | null;
  readonly settings: EndpointSettings;
  readonly health: EndpointHealth;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  failureRatio: 0.5,
  windowMs: 30_000,
  minRequests: 10,
  coolDownMs: 10_000,
};

export const DEFAULT_AUTO_DISABLE_MS = 5 * 24 * 60 * 60 * 1000;

/**
 * The instant a parked intent waits for (its endpoint paused, disabled): far past any real one,
 * so no claim takes it, and `resume` finds exactly these to wake.
 */
export const PARKED_AT = 253_402_300_799_000; // 9999-12-31T23:59:59Z

export function freshHealth(nowMs: number): EndpointHealth {
  return {
    nextSlotAt: 0,
    deferredUntil: 0,
    slowUntil: 0,
    breaker: 'closed',
    openedAt: null,
    probeUntil: null,
    windowStart: nowMs,
    requests: 0,
    failures: 0,
    failingSince: null,
  };
}

/**
 * Where endpoints live: next to the intents, in the journal's database. `update` reads the row
 * under its lock and writes back what `fn` made of it in one transaction, so two workers in two
 * processes never both take one throttle slot or both send the half-open breaker's probe.
 */
export interface EndpointStore {
  add(endpoint: EndpointRecord): Promise<boolean>;
  get(id: string): Promise<EndpointRecord | undefined>;
  list(): Promise<EndpointRecord[]>;
  /** `fn` returns the row to write (undefined: unchanged) and a result; undefined when no such row. */
  update<T>(
    id: string,
    fn: (current: EndpointRecord) => readonly [EndpointRecord | undefined, T],
  ): Promise<T | undefined>;
  /** Makes the endpoint's parked intents due at `nowMs`; how many. */
  wake(id: string, nowMs: number): Promise<number>;
  /**
   * Deletes the row and, in the same transaction, finishes each of its pending intents no live
   * lease holds with `final` (state `cancelled`): how many; undefined when no such row.
   */
  remove(id: string, final: FinalRecord, nowMs: number): Promise<number | undefined>;
}
