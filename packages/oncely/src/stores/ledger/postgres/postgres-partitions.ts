import { qualified, type PostgresLedgerTables } from './postgres-tombstones.js';
import { listRangePartitions } from './range-partitions.js';

type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[]; rowCount: number }>;

/**
 * One range partition of the tombstone table. Its bounds are shifted by 1 ms: the partition of
 * `endMs` holds tombstone ends in (endMs - partitionMs, endMs], so it is wholly due, and dropped,
 * at endMs (a tombstone is due when now >= its end).
 */
export interface TombstonePartition {
  readonly name: string;
  readonly endMs: number;
}

/**
 * Time partitions of the tombstone table (PostgreSQL declarative partitioning,
 * https://www.postgresql.org/docs/15/ddl-partitioning.html). Each covers `partitionMs` of
 * tombstone ends; a partition is dropped whole once its upper bound has passed, which "can be
 * very much faster than a bulk operation" and "entirely avoids the VACUUM overhead caused by a
 * bulk DELETE" (same page, 5.11.1). A tombstone is kept up to `partitionMs` past its own end
 * (lookups still judge it by its expires_at, so it answers "never seen" on time).
 *
 * Sizing: at most tombstoneMs / partitionMs + 1 partitions exist at a time (fewer when keys
 * expire only now and then); see docs/ledger.md, "Sizing".
 */
export function postgresPartitions(
  tables: PostgresLedgerTables,
  partitionMs: number,
  query: Query,
) {
  /** Partition ends known to exist (from the last catalog read): saves a read per sweep step. */
  let known = new Set<number>();

  async function list(): Promise<TombstonePartition[]> {
    const partitions = await listRangePartitions(query, tables.tombstones);
    return partitions.map(({ name, toMs }) => ({ name, endMs: toMs - 1 }));
  }

  /**
   * Makes sure a partition exists for each of `ends` (multiples of partitionMs), before tombstones are
   * written into them, off the request path. Only partitions that will hold rows are made, so a
   * long tombstone time or a small partitionMs never creates thousands of empty tables.
   */
  async function ensure(ends: readonly number[]): Promise<void> {
    if (ends.every((end) => known.has(end))) return;
    known = new Set((await list()).map((p) => p.endMs));
    for (const endMs of ends) {
      if (known.has(endMs)) continue;
      const name = `${tables.tombstonesName}_${endMs}`;
      // IF NOT EXISTS: two processes sweeping at once make the same partition.
      const bounds = `FROM (${endMs - partitionMs + 1}) TO (${endMs + 1})`;
      await query(
        `CREATE TABLE IF NOT EXISTS ${qualified(tables, name)} PARTITION OF ${tables.tombstones} FOR VALUES ${bounds}`,
      ).catch((error: unknown) => {
        // Another process made an overlapping one first, or the default partition holds rows of
        // this range: the default keeps them, and the sweep empties it row by row.
        if (!isOverlapOrDefaultConflict(error)) throw error;
      });
      known.add(endMs);
    }
  }

  /** Drops every partition whose whole range has ended by `nowMs`; returns the tombstones dropped. */
  async function dropEnded(nowMs: number): Promise<number> {
    // Known partitions, none ended yet: no catalog read (this runs at every sweep step).
    if (known.size > 0 && [...known].every((end) => end > nowMs)) return 0;
    let dropped = 0;
    const partitions = await list();
    known = new Set(partitions.map((p) => p.endMs));
    for (const p of partitions) {
      if (p.endMs > nowMs) continue;
      const table = qualified(tables, p.name);
      const { rows } = await query(`SELECT count(*) AS n FROM ${table}`);
      // DETACH first (a short lock on the parent), then DROP the detached table on its own.
      await query(`ALTER TABLE ${tables.tombstones} DETACH PARTITION ${table}`);
      await query(`DROP TABLE ${table}`);
      known.delete(p.endMs);
      dropped += Number((rows[0] as { n: string }).n);
    }
    return dropped;
  }

  return { list, ensure, dropEnded };
}

function isOverlapOrDefaultConflict(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  // 42P07 duplicate_table, 42P17 invalid_object_definition (overlap), 23514 check_violation (default holds rows).
  return code === '42P07' || code === '42P17' || code === '23514';
}
