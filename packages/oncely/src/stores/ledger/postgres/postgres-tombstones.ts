import type { EntryVersion, ExpiredEntry } from '../../../ledger/ledger-entry.js';
import { LEDGER_COLUMNS } from '../ledger-row.js';
import { TOMBSTONE_COLUMNS, expiredAtOfToken, tombstoneValues } from '../tombstone-row.js';

/** A PostgreSQL ledger's table names: the live table and its tombstones, quoted and qualified. */
export interface PostgresLedgerTables {
  /** `"schema"."name"` or `"name"`. */
  readonly live: string;
  readonly tombstones: string;
  /** The schema, or undefined for the search_path. */
  readonly schema: string | undefined;
  /** The receipts table's bare name, for its partitions and its claim function. */
  readonly liveName: string;
  /** The tombstone table's bare name, for partition and index names. */
  readonly tombstonesName: string;
}

export function postgresLedgerTables(
  schema: string | undefined,
  tableName: string,
): PostgresLedgerTables {
  const q = (name: string): string =>
    schema === undefined ? `"${name}"` : `"${schema}"."${name}"`;
  const tombstonesName = `${tableName}_tombstones`;
  return {
    live: q(tableName),
    tombstones: q(tombstonesName),
    schema,
    liveName: tableName,
    tombstonesName,
  };
}

/** Qualifies a name in the ledger's schema. */
export function qualified(tables: PostgresLedgerTables, name: string): string {
  return tables.schema === undefined ? `"${name}"` : `"${tables.schema}"."${name}"`;
}

/**
 * The tombstone table, partitioned by range of its own end (expires_at): tombstones whose time is
 * over go with their whole partition (DROP TABLE: no row deletes, no dead tuples, almost no WAL;
 * see postgres-partitions.ts). No unique key (a partitioned table's unique key must include the
 * partition column): a key expired twice may have two tombstones, and the newest one counts. The
 * DEFAULT partition catches what no range partition covers yet; sweeps empty it row by row.
 */
export function postgresTombstoneSchema(tables: PostgresLedgerTables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${tables.tombstones} (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint BYTEA NOT NULL,
      first_seen_at BIGINT NOT NULL,
      expired_at BIGINT NOT NULL,
      completed_at BIGINT,
      expires_at BIGINT NOT NULL
    ) PARTITION BY RANGE (expires_at)`,
    `CREATE INDEX IF NOT EXISTS "${tables.tombstonesName}_key" ON ${tables.tombstones} (scope, key, expired_at)`,
    `CREATE TABLE IF NOT EXISTS ${qualified(tables, `${tables.tombstonesName}_default`)} PARTITION OF ${tables.tombstones} DEFAULT`,
  ];
}

/**
 * The point read of a key: its live row, else its newest tombstone dressed as a ledger row, in one
 * round trip. The Append stops at the first row (LIMIT 1), so a live key never probes tombstones,
 * and the live partitions are read newest first (ORDER BY first_seen_at DESC, an ordered scan of
 * the partitions): a recent key never descends the older partitions' indexes.
 */
export function postgresGetSql(tables: PostgresLedgerTables): string {
  const tombstone = `SELECT scope, key, fingerprint, 'expired' AS state, 'expired@' || expired_at AS token, first_seen_at, expires_at,
      NULL::bigint AS lease_expires_at, completed_at, expired_at, NULL::integer AS status, NULL::text AS headers, NULL::bytea AS body
    FROM ${tables.tombstones} WHERE scope = $1 AND key = $2 ORDER BY expired_at DESC LIMIT 1`;
  return `(SELECT ${LEDGER_COLUMNS.join(', ')} FROM ${tables.live} WHERE scope = $1 AND key = $2 ORDER BY first_seen_at DESC LIMIT 1) UNION ALL (${tombstone}) LIMIT 1`;
}

type Query = (text: string, values: unknown[]) => Promise<{ rowCount: number }>;

/** The writes that cross the two tables (LedgerStore.swap and remove on a tombstone's side). */
export function postgresTombstoneWrites(
  tables: PostgresLedgerTables,
  asyncCommit: string,
  query: Query,
) {
  const n = TOMBSTONE_COLUMNS.length;
  const sql = {
    // Purge on access: the live row goes, its tombstone comes, in one statement.
    bury: `WITH gone AS (DELETE FROM ${tables.live} WHERE scope = $${n + 1} AND key = $${n + 2} AND token = $${n + 3} AND state = $${n + 4} RETURNING 1)
      INSERT INTO ${tables.tombstones} (${TOMBSTONE_COLUMNS.join(', ')}) SELECT ${TOMBSTONE_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')} FROM gone, ${asyncCommit}`,
    remove: `DELETE FROM ${tables.tombstones} USING ${asyncCommit} WHERE scope = $1 AND key = $2 AND expired_at = $3`,
  };
  return {
    bury: async (expected: EntryVersion, tombstone: ExpiredEntry) =>
      (
        await query(sql.bury, [
          ...tombstoneValues(tombstone),
          expected.scope,
          expected.key,
          expected.token,
          expected.state,
        ])
      ).rowCount === 1,
    async remove(expected: EntryVersion) {
      const expiredAt = expiredAtOfToken(expected);
      return (
        expiredAt !== undefined &&
        (await query(sql.remove, [expected.scope, expected.key, expiredAt])).rowCount === 1
      );
    },
  };
}
