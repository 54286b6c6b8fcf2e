import type { SweepResult } from '../../ledger/ledger-store.js';
import { postgresPartitions } from './postgres-partitions.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[]; rowCount: number }>;

/**
 * Bounded retention steps on PostgreSQL (LedgerStore.sweep). A step is a few short statements,
 * each its own transaction:
 * 1. at most `limit` due receipts leave the live table for the tombstone table in one statement
 *    (DELETE ... RETURNING feeding an INSERT), oldest first, skipping rows a running effect holds;
 *    only the deleted live rows become dead tuples, and a transaction of a few thousand rows never
 *    holds back VACUUM for long (one over a million did, for 10 s);
 * 2. tombstone partitions whose range has ended are dropped whole (postgres-partitions.ts);
 * 3. at most `limit` due tombstones are deleted from the DEFAULT partition (normally empty).
 */
export function postgresSweep(tables: PostgresLedgerTables, partitionMs: number, query: Query) {
  const partitions = postgresPartitions(tables, partitionMs, query);
  const defaultPartition = qualified(tables, `${tables.tombstonesName}_default`);
  const dueLive = `SELECT expires_at FROM ${tables.live} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2`;
  const sql = {
    // The tombstone ends the next move will write (an index-only read of the same rows).
    // (bigint division truncates: (e + p - 1) / p * p is the next multiple of p at or above e.)
    ends: `SELECT DISTINCT (d.expires_at + $3 + $4 - 1) / $4 * $4 AS end_at FROM (${dueLive}) d WHERE d.expires_at + $3 > $1`,
    move: `WITH due AS (
        SELECT scope, key FROM ${tables.live} WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
      ), gone AS (
        DELETE FROM ${tables.live} l USING due WHERE l.scope = due.scope AND l.key = due.key
        RETURNING l.scope, l.key, l.fingerprint, l.first_seen_at, l.expires_at, l.completed_at
      ), buried AS (
        INSERT INTO ${tables.tombstones} (scope, key, fingerprint, first_seen_at, expired_at, completed_at, expires_at)
        SELECT scope, key, fingerprint, first_seen_at, expires_at, completed_at, expires_at + $3 FROM gone WHERE expires_at + $3 > $1
      )
      SELECT count(*) AS n FROM gone`,
    purgeDefault: `DELETE FROM ${defaultPartition} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${defaultPartition} WHERE expires_at <= $1 LIMIT $2))`,
    backlog: `SELECT (SELECT count(*) FROM ${tables.live} WHERE expires_at <= $1) + (SELECT count(*) FROM ${tables.tombstones} WHERE expires_at <= $1) AS n`,
  };

  return {
    partitions,
    async step(nowMs: number, tombstoneMs: number, limit: number): Promise<SweepResult> {
      const rows = Number.isFinite(limit) ? limit : null; // LIMIT NULL: no limit
      // The partitions the moved rows' tombstones go to must exist first.
      const ends = await query(sql.ends, [nowMs, rows, tombstoneMs, partitionMs]);
      await partitions.ensure(
        (ends.rows as Array<{ end_at: string }>).map((r) => Number(r.end_at)),
      );
      const moved = await query(sql.move, [nowMs, rows, tombstoneMs]);
      const dropped = await partitions.dropEnded(nowMs);
      const purged = await query(sql.purgeDefault, [nowMs, rows]);
      return {
        tombstoned: Number((moved.rows[0] as { n: string }).n),
        deleted: dropped + purged.rowCount,
      };
    },
    async backlog(nowMs: number): Promise<number> {
      const { rows } = await query(sql.backlog, [nowMs]);
      return Number((rows[0] as { n: string }).n);
    },
  };
}
