import type { EntryVersion, ExpiredEntry } from '../../ledger/ledger-entry.js';
import { fingerprintFromBytes, fingerprintToBytes } from './fingerprint-bytes.js';
import { optionalMillis } from './ledger-row.js';

/**
 * Tombstones live in a table of their own, with only what a lookup answers ("expired", with the
 * fingerprint and the instants) and nothing a replay needs: no receipt, no token, no lease. The
 * receipt's row is deleted when it expires instead of being rewritten in place, so the live
 * table's indexed columns are never updated and its rows never linger without their receipt.
 */
export const TOMBSTONE_COLUMNS = [
  'scope',
  'key',
  'fingerprint',
  'first_seen_at',
  'expired_at',
  'completed_at',
  'expires_at',
] as const;

export type TombstoneRow = Record<(typeof TOMBSTONE_COLUMNS)[number], unknown>;

/**
 * A tombstone keeps no owner token; its version token is derived from when it expired, which is
 * distinct for each generation of a key (one tombstone per key and expiry), so a compare-and-swap
 * on a tombstone still names one version.
 */
const TOKEN_PREFIX = 'expired@';

export function tombstoneToken(expiredAt: number): string {
  return `${TOKEN_PREFIX}${expiredAt}`;
}

/** The expiry instant a tombstone version names, or undefined when the token is no tombstone's. */
export function expiredAtOfToken(version: EntryVersion): number | undefined {
  if (version.state !== 'expired' || !version.token.startsWith(TOKEN_PREFIX)) return undefined;
  const at = Number(version.token.slice(TOKEN_PREFIX.length));
  return Number.isSafeInteger(at) ? at : undefined;
}

export function tombstoneValues(entry: ExpiredEntry): unknown[] {
  return [
    entry.scope,
    entry.key,
    fingerprintToBytes(entry.fingerprint),
    entry.firstSeenAt,
    entry.expiredAt,
    entry.completedAt ?? null,
    entry.expiresAt,
  ];
}

export function rowToTombstone(row: TombstoneRow): ExpiredEntry {
  const expiredAt = Number(row.expired_at);
  return {
    scope: String(row.scope),
    key: String(row.key),
    fingerprint: fingerprintFromBytes(row.fingerprint),
    token: tombstoneToken(expiredAt),
    state: 'expired',
    firstSeenAt: Number(row.first_seen_at),
    expiredAt,
    expiresAt: Number(row.expires_at),
    completedAt: optionalMillis(row.completed_at),
  };
}
