/**
 * How the receiver answered one arrival.
 * - completed: the script said 2xx; the work was done and the ack sent.
 * - swallowed: the work was done, then the connection was dropped with no ack.
 * - replayed: a key that already completed came back with the same request: the stored ack, again.
 * - rejected: the script said no (429, 503, 400, ...); nothing is stored, so a retry runs the script again.
 * - key_reused: a completed key came back with a different request (422).
 * - key_invalid: a malformed Idempotency-Key (400).
 * - too_large: a body over the limit (413).
 * - in_flight: the first delivery under this key is still being processed (409 + Retry-After).
 * - unavailable: the ledger could not be reached (503); nothing was done.
 * - failed: the receiver itself failed (500); the work rolled back.
 */
export const HIT_ANSWERS = [
  'completed',
  'swallowed',
  'replayed',
  'rejected',
  'key_reused',
  'key_invalid',
  'too_large',
  'in_flight',
  'unavailable',
  'failed',
] as const;
export type HitAnswer = (typeof HIT_ANSWERS)[number];

/** One arrival, as the receiver saw it: the webhook storm's hit list, structured (docs/origins.md). */
export interface HookHit {
  /** Counts the caller's arrivals from 1 since the last reset. */
  readonly seq: number;
  /** When it arrived, from the receiver's clock. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly key: string | null;
  /**
   * SHA-256 of the body bytes: tells a retry of the same payload from a new payload. Null for a
   * body refused as too large: it was never read in full, so there is nothing to hash.
   */
  readonly bodySha256: string | null;
  readonly answer: HitAnswer;
  /** The status sent; null when the reply was swallowed. */
  readonly status: number | null;
  readonly retryAfter?: string;
}

export interface HookCounts {
  readonly arrivals: number;
  /** Arrivals that did the work: completed plus swallowed. A retry-safe client makes at most one. */
  readonly completions: number;
  readonly replays: number;
}
