import { DEFAULT_ROW_LIMITS } from '../receivers/sql/row-limit.js';
import type { ServiceDatabase } from '../receivers/sql/service-database.js';

/** One ledger entry as the store view shows it: never the receipt's body, never another caller's. */
export interface ReceiptListing {
  readonly key: string;
  readonly caller: string;
  readonly fingerprint: string;
  /** in_flight, completed or expired (a tombstone). */
  readonly state: string;
  /** The stored status; null while in flight or after expiry. */
  readonly status: number | null;
  readonly firstSeenAt: string;
  readonly completedAt: string | null;
  readonly expiresAt: string;
}

/**
 * A read-only listing of one caller's ledger entries, newest first, for the store view: the
 * newest `limit` and how many the caller has in all (one statement, one snapshot). The ledger has
 * no list API (it answers by key); this reads its table through the service database, so on
 * SQLite it waits its turn on the one connection instead of joining another request's transaction.
 */
export async function listReceipts<Tx>(
  db: ServiceDatabase<Tx>,
  tables: { readonly ledgerTable: string; readonly tombstoneTable: string },
  caller: string,
  limit: number = DEFAULT_ROW_LIMITS.defaultLimit,
): Promise<{ receipts: ReceiptListing[]; total: number }> {
  const rows = await db.transaction((sql) =>
    sql.all<Record<string, unknown>>(
      // Live entries, then tombstones (a key may have both after it was claimed again: both show).
      `SELECT key, scope, fingerprint, state, status, first_seen_at, completed_at, expires_at, COUNT(*) OVER () AS total FROM (
         SELECT key, scope, fingerprint, state, status, first_seen_at, completed_at, expires_at FROM ${tables.ledgerTable} WHERE scope = $1
         UNION ALL
         SELECT key, scope, fingerprint, 'expired', NULL, first_seen_at, completed_at, expires_at FROM ${tables.tombstoneTable} WHERE scope = $1
       ) AS entries ORDER BY first_seen_at DESC, key LIMIT $2`,
      [caller, limit],
    ),
  );
  const iso = (value: unknown): string => new Date(Number(value)).toISOString();
  const receipts = rows.map((row) => ({
    key: String(row['key']),
    caller: String(row['scope']),
    fingerprint: fingerprintFromBytes(row['fingerprint']),
    state: String(row['state']),
    status: row['status'] === null || row['status'] === undefined ? null : Number(row['status']),
    firstSeenAt: iso(row['first_seen_at']),
    completedAt:
      row['completed_at'] === null || row['completed_at'] === undefined
        ? null
        : iso(row['completed_at']),
    expiresAt: iso(row['expires_at']),
  }));
  // The window counts before LIMIT; no row sent means the caller has none (limit is at least 1).
  return { receipts, total: Number(rows[0]?.['total'] ?? 0) };
}

/**
 * A fingerprint column as the stores write it (src/stores/ledger/fingerprint-bytes.ts): a tag byte, then
 * the 32 bytes of a SHA-256 hex (tag 1) or the UTF-8 of any other text (tag 0); a text column of
 * an earlier table reads as is. The page reads the table's rows itself, so it reads this too.
 */
function fingerprintFromBytes(stored: unknown): string {
  if (typeof stored === 'string') return stored;
  const bytes = Buffer.isBuffer(stored) ? stored : Buffer.from(stored as Uint8Array);
  if (bytes[0] === 1) return bytes.toString('hex', 1);
  if (bytes[0] === 0) return bytes.toString('utf8', 1);
  throw new TypeError(`stored fingerprint has an unknown tag byte ${bytes[0]}`);
}
