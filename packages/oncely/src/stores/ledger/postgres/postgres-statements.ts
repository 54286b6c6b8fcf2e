import { LEDGER_COLUMNS } from '../ledger-row.js';
import { postgresClaimFunction } from './postgres-claim.js';
import type { PgQueryConfig } from '../../postgres-driver/pg-pool.js';
import { postgresGetSql, type PostgresLedgerTables } from './postgres-tombstones.js';

/**
 * A one-row subquery whose evaluation makes the statement's own (implicit) transaction commit
 * asynchronously; transaction-local, so it ends with that commit.
 */
export const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit`;

/**
 * The ledger's statements on PostgreSQL, each prepared once per pooled connection (named): the
 * server parses and plans each once. Every found/lost answer is in the rows they return.
 */
export function postgresStatements(tables: PostgresLedgerTables, commitLevel: string) {
  const table = tables.live;
  const n = LEDGER_COLUMNS.length;
  const where = (from: number): string =>
    `scope = $${from} AND key = $${from + 1} AND token = $${from + 2} AND state = $${from + 3}`;
  const set = `SET ${LEDGER_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')}`;
  const texts = {
    get: postgresGetSql(tables),
    // Lookup + claim of a batch in one statement: inserts, or returns the committed row
    // (postgres-claim.ts).
    claims: postgresClaimFunction(tables).call,
    // Bookkeeping: each commits on its own, asynchronously (docs/durability.md).
    swap: `UPDATE ${table} ${set} FROM ${ASYNC_COMMIT} WHERE ${where(n + 1)}`,
    renew: `UPDATE ${table} SET lease_expires_at = $1 FROM ${ASYNC_COMMIT} WHERE ${where(2)}`,
    remove: `DELETE FROM ${table} USING ${ASYNC_COMMIT} WHERE ${where(1)}`,
    // The receipt, in the effect's transaction: one row, `completed` 1 when it replaced the
    // in-flight row, 0 when another worker owns the key now (then the transaction rolls back,
    // postgres-transaction.ts). It sets the commit's level too: the last statement before COMMIT.
    receipt: `WITH done AS (UPDATE ${table} ${set} WHERE ${where(n + 1)} RETURNING 1) SELECT count(*)::int AS completed, (${commitLevel}) AS commit_level FROM done`,
  };
  const prefix = `oncely_${hashName(table)}`;
  return {
    /** The statement `use` with `values`, named after the table. */
    named: (use: keyof typeof texts, values: unknown[]): PgQueryConfig => ({
      name: `${prefix}_${use}`,
      text: texts[use],
      values,
    }),
    /** A name for another statement of this table's. */
    nameOf: (use: string): string => `${prefix}_${use}`,
  };
}

/** A short stable name for the table, for prepared statement and channel names (at most 63 bytes). */
export function hashName(table: string): string {
  let h = 0;
  for (let i = 0; i < table.length; i++) h = (Math.imul(h, 31) + table.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}
