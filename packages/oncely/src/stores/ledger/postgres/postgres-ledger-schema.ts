import { LedgerLayoutError } from '../ledger-layout-error.js';
import type { PgQueryable } from '../../postgres-driver/pg-pool.js';
import { postgresClaimFunction } from './postgres-claim.js';
import { postgresDeferredFunction } from './postgres-deferred-function.js';
import { postgresReceiptFunction } from './postgres-receipt-function.js';
import { postgresSingleClaimFunction } from './postgres-single-claim.js';
import { postgresTombstoneSchema, type PostgresLedgerTables } from './postgres-tombstones.js';

/**
 * The PostgreSQL ledger's tables as this oncely makes them, in order: receipts partitioned by
 * first sighting (postgres-receipt-partitions.ts; the primary key must include that column, so
 * (scope, key) is kept unique by the claim, postgres-claim.ts), their `expires_at` index, the
 * claim functions (batch and single) and the receipt function, and the tombstone table (postgres-tombstones.ts). Shared by the store's set-up
 * and the migration from an earlier layout.
 */
export function postgresLedgerSchema(tables: PostgresLedgerTables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${tables.live} (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint BYTEA NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'expired')),
        token TEXT NOT NULL,
        first_seen_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        lease_expires_at BIGINT,
        completed_at BIGINT,
        expired_at BIGINT,
        status INTEGER,
        headers TEXT,
        body BYTEA,
        PRIMARY KEY (scope, key, first_seen_at)
      ) PARTITION BY RANGE (first_seen_at)`,
    `CREATE INDEX IF NOT EXISTS "${tables.liveName}_expires_at" ON ${tables.live} (expires_at)`,
    postgresClaimFunction(tables).ddl,
    postgresSingleClaimFunction(tables).ddl,
    postgresReceiptFunction(tables).ddl,
    postgresDeferredFunction(tables).ddl,
    ...postgresTombstoneSchema(tables),
  ];
}

/**
 * Which layout the receipts table has: none yet, this oncely's (partitioned), or an earlier one:
 * 'text' (fingerprints as hex text, tombstones in place) or 'flat' (fingerprints as bytes and a
 * tombstone table, but receipts not partitioned by time).
 */
export async function postgresLedgerLayout(
  client: PgQueryable,
  tables: PostgresLedgerTables,
): Promise<'missing' | 'current' | 'text' | 'flat'> {
  const { rows } = await client.query(
    `SELECT c.relkind::text AS relkind, (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'fingerprint' AND NOT a.attisdropped) AS fingerprint
     FROM pg_class c WHERE c.oid = to_regclass($1)`,
    [tables.live],
  );
  const found = rows[0] as { relkind: string; fingerprint: string | null } | undefined;
  if (found === undefined) return 'missing';
  if (found.fingerprint === 'text') return 'text';
  return found.relkind === 'p' ? 'current' : 'flat';
}

/**
 * Creates the ledger's tables in one transaction (`tx`: its statements), once per store: shared
 * by the pg store and the ORM stores, so both make the same tables.
 */
export async function setUpPostgresLedger(
  tx: PgQueryable,
  tables: PostgresLedgerTables,
  schema: string | undefined,
): Promise<void> {
  // Two processes starting together would race on CREATE TABLE IF NOT EXISTS (a unique
  // violation on pg_type); an advisory lock on the table's name lets one go first.
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${tables.live}`]);
  // A table made by an earlier oncely is refused before anything is created next to it.
  const layout = await postgresLedgerLayout(tx, tables);
  if (layout === 'text') throw new LedgerLayoutError('postgres', tables.live);
  if (layout === 'flat')
    throw new LedgerLayoutError('postgres', tables.live, 'is not partitioned by time');
  if (schema !== undefined) await tx.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  for (const ddl of postgresLedgerSchema(tables)) await tx.query(ddl);
}
