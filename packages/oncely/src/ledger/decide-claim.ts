import type { CompletedEntry, InFlightEntry, LedgerEntry } from './ledger-entry.js';

export const TAKE_OVER_REASONS = ['lease_expired', 'retention_expired'] as const;
export type TakeOverReason = (typeof TAKE_OVER_REASONS)[number];

/** What to do with a request given the key's committed entry: a pure step, no store, no clock. */
export type ClaimDecision =
  | { readonly action: 'insert' }
  | {
      readonly action: 'take_over';
      readonly reason: TakeOverReason;
      readonly previous: LedgerEntry;
    }
  | { readonly action: 'conflict'; readonly entry: InFlightEntry | CompletedEntry }
  | { readonly action: 'replay'; readonly entry: CompletedEntry }
  | { readonly action: 'wait'; readonly entry: InFlightEntry; readonly retryAfterMs: number };

/**
 * The rules, in order:
 * 1. no entry: claim it;
 * 2. retention over (or a tombstone): the key is new again, whatever the fingerprint;
 * 3. a different fingerprint on a live entry, in flight or completed: conflict, checked before
 *    anything else (the wire contract of docs/design.md answers 422 before 409);
 * 4. completed: replay;
 * 5. in flight with a live lease: wait for the rest of the lease;
 * 6. in flight with an expired lease: the owner is presumed dead; take over.
 * Instants are inclusive at the end: a lease or retention is over once now >= its end.
 */
export function decideClaim(
  existing: LedgerEntry | undefined,
  fingerprint: string,
  nowMs: number,
): ClaimDecision {
  if (existing === undefined) return { action: 'insert' };
  if (existing.state === 'expired' || existing.expiresAt <= nowMs) {
    return { action: 'take_over', reason: 'retention_expired', previous: existing };
  }
  if (existing.fingerprint !== fingerprint) return { action: 'conflict', entry: existing };
  if (existing.state === 'completed') return { action: 'replay', entry: existing };
  if (existing.leaseExpiresAt > nowMs) {
    return { action: 'wait', entry: existing, retryAfterMs: existing.leaseExpiresAt - nowMs };
  }
  return { action: 'take_over', reason: 'lease_expired', previous: existing };
}
