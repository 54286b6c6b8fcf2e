import { checkRequest, expiredAnswer } from './ledger-answers.js';
import type { LedgerCore } from './ledger-claim.js';
import { tombstoneOf, versionOf } from './ledger-entry.js';
import type { LookupResult } from './ledger-result.js';

/** The read-only status lookup by (scope, key); purges what it finds expired. */
export async function lookupKey<Tx>(
  { o }: LedgerCore<Tx>,
  scope: string,
  key: string,
): Promise<LookupResult> {
  checkRequest({ scope, key, fingerprint: '-' });
  const { store } = o;
  try {
    const entry = await store.get(scope, key);
    if (entry === undefined) return { kind: 'never_seen' };
    const nowMs = o.clock.now();
    if (entry.state === 'expired') {
      if (entry.expiresAt > nowMs)
        return expiredAnswer(
          entry.fingerprint,
          entry.firstSeenAt,
          entry.expiredAt,
          entry.completedAt,
        );
      await store.remove(versionOf(entry)).catch(() => false); // purge on access: the tombstone's own time is over
      return { kind: 'never_seen' };
    }
    if (entry.expiresAt <= nowMs) {
      const tombstone = tombstoneOf(entry, o.tombstoneMs);
      await store.swap(versionOf(entry), tombstone).catch(() => false); // purge on access; losing this race is harmless
      return expiredAnswer(
        entry.fingerprint,
        entry.firstSeenAt,
        tombstone.expiredAt,
        tombstone.completedAt,
      );
    }
    if (entry.state === 'completed') {
      const { receipt, fingerprint, firstSeenAt, completedAt, expiresAt } = entry;
      return { kind: 'found', receipt, fingerprint, firstSeenAt, completedAt, expiresAt };
    }
    return {
      kind: 'in_flight',
      fingerprint: entry.fingerprint,
      firstSeenAt: entry.firstSeenAt,
      leaseExpiresAt: entry.leaseExpiresAt,
      leaseExpired: entry.leaseExpiresAt <= nowMs,
    };
  } catch (cause) {
    return { kind: 'unavailable', cause };
  }
}
