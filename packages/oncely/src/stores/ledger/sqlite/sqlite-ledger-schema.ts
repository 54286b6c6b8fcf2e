import { sqliteTombstoneSchema } from './sqlite-tombstones.js';

/**
 * The SQLite ledger's tables as this oncely makes them: receipts WITHOUT ROWID (the primary key is
 * the table, so (scope, key) is stored once), the fingerprint as bytes (fingerprint-bytes.ts), the
 * `expires_at` index the sweep walks, and the tombstone table (sqlite-tombstones.ts). Shared by
 * the store, which creates them when missing, and by the migration from an earlier layout.
 */
export function sqliteLedgerSchema(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint BLOB NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'expired')),
      token TEXT NOT NULL,
      first_seen_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      lease_expires_at INTEGER,
      completed_at INTEGER,
      expired_at INTEGER,
      status INTEGER,
      headers TEXT,
      body BLOB,
      PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at);
    ${sqliteTombstoneSchema(table)}`;
}

/** An earlier layout: the fingerprint stored as text (and tombstones kept in the receipts table). */
export function isEarlierSqliteLayout(
  columns: ReadonlyArray<{ name: string; type: string }>,
): boolean {
  return columns.some((c) => c.name === 'fingerprint' && c.type.toUpperCase() === 'TEXT');
}
