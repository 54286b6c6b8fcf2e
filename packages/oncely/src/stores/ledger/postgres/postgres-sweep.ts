import type { SweepResult } from '../../../ledger/ledger-store.js';
import { postgresPartitions } from './postgres-partitions.js';
import type { ReceiptPartition, postgresReceiptPartitions } from './postgres-receipt-partitions.js';
import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';

type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[]; rowCount: number }>;
type ReceiptPartitions = ReturnType<typeof postgresReceiptPartitions>;

/** Where the tombstone copy of a partition stands: the last (scope, key) copied, or done. */
type Cursor = { readonly scope: string; readonly key: string } | 'done';

/**
 * Bounded retention steps on PostgreSQL (LedgerStore.sweep). Receipts never leave the table one
 * row at a time: they go with their time partition (postgres-receipt-partitions.ts). A step:
 * 1. makes sure partitions exist for now and the next span, so claims rarely wait for one;
 * 2. for the oldest partition whose every receipt is due: copies at most `limit` of its receipts'
 *    tombstones into the tombstone table (one INSERT ... SELECT, in primary-key order from where
 *    the last step stopped; a receipt already buried is skipped, so a step redone after a crash
 *    writes nothing twice), and once all are copied, drops the partition;
 * 3. drops tombstone partitions whose range has ended (postgres-partitions.ts), and deletes at most
 *    `limit` due tombstones from the DEFAULT tombstone partition (normally empty).
 * Only inserts into the tombstone table write WAL; nothing is deleted row by row, so nothing is
 * left for VACUUM, and no transaction is long.
 */
export function postgresSweep(
  tables: PostgresLedgerTables,
  tombstonePartitionMs: number,
  receipts: ReceiptPartitions & { readonly partitionMs: number },
  query: Query,
) {
  const tombstonePartitions = postgresPartitions(tables, tombstonePartitionMs, query);
  const defaultPartition = qualified(tables, `${tables.tombstonesName}_default`);
  const cursors = new Map<string, Cursor>();
  /** The due partitions for the sweep's instant (a sweep runs all its steps at one instant). */
  let dueAt: { nowMs: number; partitions: ReceiptPartition[] } | undefined;

  async function duePartitions(nowMs: number): Promise<ReceiptPartition[]> {
    if (dueAt?.nowMs !== nowMs) dueAt = { nowMs, partitions: await receipts.due(nowMs) };
    return dueAt.partitions;
  }
  const settle = (p: ReceiptPartition): void => {
    cursors.delete(p.name);
    if (dueAt) dueAt = { ...dueAt, partitions: dueAt.partitions.filter((d) => d !== p) };
  };

  /** Copies the tombstones of at most `limit` receipts of `p` after its cursor; returns how many it read. */
  async function bury(
    p: ReceiptPartition,
    nowMs: number,
    tombstoneMs: number,
    limit: number | null,
  ): Promise<number> {
    const table = qualified(tables, p.name);
    const cursor = cursors.get(p.name);
    const params = cursorParams(cursor);
    const next = params.length + 1; // $next = limit, then tombstoneMs, nowMs, span
    const rows = batch(table, cursor, `$${next}`, 1);
    // The tombstone partitions these rows go to must exist first. (bigint division truncates:
    // (e + p - 1) / p * p is the next multiple of p at or above e.)
    const ends = await query(
      `SELECT DISTINCT (d.expires_at + $${next + 1} + $${next + 3} - 1) / $${next + 3} * $${next + 3} AS end_at FROM (${rows}) d WHERE d.expires_at + $${next + 1} > $${next + 2}`,
      [...params, limit, tombstoneMs, nowMs, tombstonePartitionMs],
    );
    await tombstonePartitions.ensure(
      (ends.rows as Array<{ end_at: string }>).map((r) => Number(r.end_at)),
    );
    const { rows: copied } = await query(
      `WITH batch AS (${rows}), buried AS (
         INSERT INTO ${tables.tombstones} (scope, key, fingerprint, first_seen_at, expired_at, completed_at, expires_at)
         SELECT b.scope, b.key, b.fingerprint, b.first_seen_at, b.expires_at, b.completed_at, b.expires_at + $${next + 1} FROM batch b
         WHERE b.expires_at + $${next + 1} > $${next + 2}
           AND NOT EXISTS (SELECT 1 FROM ${tables.tombstones} t WHERE t.scope = b.scope AND t.key = b.key AND t.expired_at = b.expires_at)
       )
       SELECT (SELECT count(*) FROM batch) AS n, l.scope, l.key
       FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT scope, key FROM batch ORDER BY scope DESC, key DESC LIMIT 1) l ON TRUE`,
      [...params, limit, tombstoneMs, nowMs],
    );
    const row = copied[0] as { n: string; scope: string | null; key: string | null };
    const n = Number(row.n);
    const done = limit === null || n < limit || row.scope === null;
    cursors.set(p.name, done ? 'done' : { scope: row.scope!, key: row.key! });
    return n;
  }

  return {
    async step(nowMs: number, tombstoneMs: number, limit: number): Promise<SweepResult> {
      const rows = Number.isFinite(limit) ? limit : null; // LIMIT NULL: no limit
      await receipts.ensure([nowMs, nowMs + receipts.partitionMs]);
      let tombstoned = 0;
      let busy = false;
      for (const p of [...(await duePartitions(nowMs))]) {
        if (rows !== null && tombstoned >= rows) break;
        if (cursors.get(p.name) !== 'done') {
          tombstoned += await bury(p, nowMs, tombstoneMs, rows === null ? null : rows - tombstoned);
          if (cursors.get(p.name) !== 'done') break; // the step's rows are spent
        }
        const outcome = await receipts.drop(p, nowMs);
        if (outcome === 'busy') {
          busy = true; // requests held the table past the lock timeout: the next step tries again
          break;
        }
        settle(p); // dropped; or a receipt in it was completed meanwhile, and it waits its turn
      }
      const dropped = await tombstonePartitions.dropEnded(nowMs);
      const purged = await query(
        `DELETE FROM ${defaultPartition} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${defaultPartition} WHERE expires_at <= $1 LIMIT $2))`,
        [nowMs, rows],
      );
      return { tombstoned, deleted: dropped + purged.rowCount, ...(busy ? { busy } : {}) };
    },

    /** Receipts of due partitions not yet handled, and due tombstones. */
    async backlog(nowMs: number): Promise<number> {
      let n = 0;
      for (const p of await duePartitions(nowMs)) {
        const cursor = cursors.get(p.name);
        if (cursor === 'done') continue;
        const { rows } = await query(
          `SELECT count(*) AS n FROM ${qualified(tables, p.name)} WHERE ${after(cursor, 1)}`,
          cursorParams(cursor),
        );
        n += Number((rows[0] as { n: string }).n);
      }
      const { rows } = await query(
        `SELECT count(*) AS n FROM ${tables.tombstones} WHERE expires_at <= $1`,
        [nowMs],
      );
      return n + Number((rows[0] as { n: string }).n);
    },
  };
}

/** The condition for the rows after `cursor`, its parameters from $from. */
function after(cursor: Cursor | undefined, from: number): string {
  if (cursor === undefined) return 'TRUE';
  return cursor === 'done' ? 'FALSE' : `(scope, key) > ($${from}, $${from + 1})`;
}

function cursorParams(cursor: Cursor | undefined): unknown[] {
  return cursor === undefined || cursor === 'done' ? [] : [cursor.scope, cursor.key];
}

/** The next batch of receipts of `table` after `cursor`, in key order. */
function batch(table: string, cursor: Cursor | undefined, limit: string, from: number): string {
  return `SELECT scope, key, fingerprint, first_seen_at, expires_at, completed_at FROM ${table} WHERE ${after(cursor, from)} ORDER BY scope, key LIMIT ${limit}`;
}
