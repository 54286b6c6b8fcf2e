import type { Receipt } from '../contract/receipt.js';

/** One request as the ledger sees it. */
export interface LedgerRequest {
  /** The authenticated caller (tenant, account, token owner). Keys never cross scopes. */
  readonly scope: string;
  /** The Idempotency-Key. */
  readonly key: string;
  /** A hash of what the request asks for (e.g. method + path + body); see contract/fingerprint. */
  readonly fingerprint: string;
}

/** What the effect is told about its claim, besides the transaction handle. */
export interface Claim {
  readonly scope: string;
  readonly key: string;
  readonly fingerprint: string;
  readonly firstSeenAt: number;
  /** When the lease ends unless renewed; equal to firstSeenAt for a deferred effect run without a claim (no lease). */
  readonly leaseExpiresAt: number;
  /**
   * True when an earlier worker's lease expired and this one took the key over. A database
   * effect of the earlier worker rolled back with it; an external one (an email, an HTTP call,
   * anything outside the ledger's database) may have happened: such effects are at-least-once,
   * and `tookOver` is the signal to check before repeating them (docs/durability.md).
   */
  readonly tookOver: boolean;
}

export const EXECUTE_KINDS = [
  'executed',
  'replayed',
  'conflict',
  'in_flight',
  'not_stored',
  'lease_lost',
  'unavailable',
] as const;
export type ExecuteKind = (typeof EXECUTE_KINDS)[number];

/**
 * The answer to {@link Ledger.execute}, as data (docs/design.md, habit 8):
 * - executed: the effect ran and committed with its receipt, in one transaction;
 * - replayed: an exact retry of a completed request; nothing ran; the stored receipt;
 * - conflict: the key is held (in flight or completed) for a different fingerprint;
 * - in_flight: the same request is being processed; come back after retryAfterMs;
 * - not_stored: the effect ran but its outcome is not one to store (5xx by default), so it was
 *   rolled back and the key released; the receipt is the answer to give this time only;
 * - lease_lost: the key was taken over while this worker ran (its lease ran out: a heartbeat
 *   that could not land); its effect's SQL rolled back with the transaction;
 * - unavailable: the store failed; the effect did not run, or rolled back with the transaction.
 * An effect that throws rolls back, releases the key and rethrows: that error is the caller's.
 */
export type ExecuteResult =
  | {
      readonly kind: 'executed' | 'replayed';
      readonly receipt: Receipt;
      readonly firstSeenAt: number;
      readonly completedAt: number;
      readonly expiresAt: number;
    }
  | {
      readonly kind: 'conflict';
      readonly state: 'in_flight' | 'completed';
      readonly firstSeenAt: number;
    }
  | {
      readonly kind: 'in_flight';
      readonly retryAfterMs: number;
      readonly leaseExpiresAt: number;
      readonly firstSeenAt: number;
    }
  | { readonly kind: 'not_stored'; readonly receipt: Receipt }
  | { readonly kind: 'lease_lost'; readonly retryAfterMs: number }
  | {
      readonly kind: 'unavailable';
      readonly stage: 'claim' | 'transaction';
      readonly cause: unknown;
    };

export const LOOKUP_KINDS = ['found', 'in_flight', 'expired', 'never_seen', 'unavailable'] as const;
export type LookupKind = (typeof LOOKUP_KINDS)[number];

/**
 * The read-only status lookup of the notes story (docs/origins.md) ("use a documented status lookup before another
 * write"). "expired" and "never_seen" differ on purpose: the first means the request was seen
 * and its receipt is gone, so resending it may repeat it; only the second means it never arrived
 * (or was forgotten beyond the tombstone period).
 */
export type LookupResult =
  | {
      readonly kind: 'found';
      readonly receipt: Receipt;
      readonly fingerprint: string;
      readonly firstSeenAt: number;
      readonly completedAt: number;
      readonly expiresAt: number;
    }
  | {
      readonly kind: 'in_flight';
      readonly fingerprint: string;
      readonly firstSeenAt: number;
      readonly leaseExpiresAt: number;
      /** The owner's lease ran out: it probably died; the next same-fingerprint request takes over. */
      readonly leaseExpired: boolean;
    }
  | {
      readonly kind: 'expired';
      readonly fingerprint: string;
      readonly firstSeenAt: number;
      readonly expiredAt: number;
      /** Undefined when the claim was abandoned before completing. */
      readonly completedAt: number | undefined;
    }
  | { readonly kind: 'never_seen' }
  | { readonly kind: 'unavailable'; readonly cause: unknown };
