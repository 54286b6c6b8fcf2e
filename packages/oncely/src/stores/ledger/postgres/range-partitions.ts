type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[]; rowCount: number }>;

/** One range partition as the catalog has it: its name and bounds [fromMs, toMs). */
export interface RangePartition {
  readonly name: string;
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * The range partitions of `parent` (a qualified table name), oldest first, read from the catalog:
 * pg_inherits for the children, pg_get_expr for each one's `FOR VALUES FROM (a) TO (b)` bound.
 */
export async function listRangePartitions(query: Query, parent: string): Promise<RangePartition[]> {
  const { rows } = await query(
    `SELECT c.relname::text AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
    [parent],
  );
  const partitions: RangePartition[] = [];
  for (const row of rows as Array<{ name: string; bound: string }>) {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(row.bound);
    if (m) partitions.push({ name: row.name, fromMs: Number(m[1]), toMs: Number(m[2]) });
  }
  return partitions.sort((a, b) => a.fromMs - b.fromMs);
}
