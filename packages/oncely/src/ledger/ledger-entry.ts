import type { Receipt } from '../contract/receipt.js';

/**
 * The life of a key in the ledger:
 * - in_flight: claimed by one worker, whose lease (owner token + leaseExpiresAt) guards it;
 * - completed: the effect and the receipt committed together; replayed until expiresAt;
 * - expired: a tombstone. Retention ended, the receipt is gone, but a lookup can still say
 *   "expired" instead of "never seen" until the tombstone itself expires.
 */
export const ENTRY_STATES = ['in_flight', 'completed', 'expired'] as const;
export type EntryState = (typeof ENTRY_STATES)[number];

interface EntryBase {
  /** Whose key this is: the authenticated caller. One caller never sees another's receipts. */
  readonly scope: string;
  readonly key: string;
  /** What the request said, hashed: the same key with another fingerprint is a conflict. */
  readonly fingerprint: string;
  /**
   * The owner token of the claim that created this state. Random per claim, so a completion or a
   * release by a worker whose lease was taken over matches nothing and is refused.
   */
  readonly token: string;
  /** When the key was first claimed (kept across a lease takeover). */
  readonly firstSeenAt: number;
  /**
   * When this state ends: retention for in_flight and completed entries, the tombstone's end for
   * expired ones. Past it, the key is treated as new.
   */
  readonly expiresAt: number;
}

export interface InFlightEntry extends EntryBase {
  readonly state: 'in_flight';
  /** The lease: until then, a retry is told to wait; after it, a new owner may take over. */
  readonly leaseExpiresAt: number;
}

export interface CompletedEntry extends EntryBase {
  readonly state: 'completed';
  readonly completedAt: number;
  readonly receipt: Receipt;
}

export interface ExpiredEntry extends EntryBase {
  readonly state: 'expired';
  /** When retention ended. */
  readonly expiredAt: number;
  /** When the request had completed, or undefined when the claim was abandoned before completing. */
  readonly completedAt: number | undefined;
}

export type LedgerEntry = InFlightEntry | CompletedEntry | ExpiredEntry;

/**
 * What a compare-and-swap matches on. A token is unique per claim and the state moves one way
 * (in_flight -> completed -> expired), so (token, state) names one version of a row.
 */
export interface EntryVersion {
  readonly scope: string;
  readonly key: string;
  readonly token: string;
  readonly state: EntryState;
}

export function versionOf(entry: LedgerEntry): EntryVersion {
  return { scope: entry.scope, key: entry.key, token: entry.token, state: entry.state };
}

/** The tombstone an entry becomes when its retention ends (seen on access or by a sweep). */
export function tombstoneOf(
  entry: InFlightEntry | CompletedEntry,
  tombstoneMs: number,
): ExpiredEntry {
  return {
    scope: entry.scope,
    key: entry.key,
    fingerprint: entry.fingerprint,
    token: entry.token,
    firstSeenAt: entry.firstSeenAt,
    state: 'expired',
    expiredAt: entry.expiresAt,
    expiresAt: entry.expiresAt + tombstoneMs,
    completedAt: entry.state === 'completed' ? entry.completedAt : undefined,
  };
}
