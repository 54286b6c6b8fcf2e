import { InvalidOptionError } from '../../../contract/errors.js';
import { LEDGER_COLUMNS, checkIdentifier, entryValues, type LedgerRow } from '../ledger-row.js';
import {
  LedgerMigrationError,
  MIGRATION_BATCH_ROWS,
  entryOfEarlierRow,
  missingLedgerColumns,
  type LedgerMigration,
  type MigrationProgress,
} from '../ledger-migration.js';
import { TOMBSTONE_COLUMNS, tombstoneValues } from '../tombstone-row.js';
import type { PgPool, PgQueryable } from '../../postgres-driver/pg-pool.js';
import { postgresLedgerLayout, postgresLedgerSchema } from './postgres-ledger-schema.js';
import { postgresReceiptPartitions } from './postgres-receipt-partitions.js';
import { DEFAULT_POSTGRES_STORE_OPTIONS } from './postgres-store-options.js';
import {
  postgresLedgerTables,
  qualified,
  type PostgresLedgerTables,
} from './postgres-tombstones.js';
import { LEDGER_COLUMN_TYPES } from './postgres-ledger-columns.js';
import { connectHeard } from '../../postgres-driver/connect-heard.js';

export interface PostgresMigrateOptions {
  /** The ledger's table. @default 'oncely_ledger' */
  readonly table?: string;
  /** Its schema. @default undefined (the connection's search_path) */
  readonly schema?: string | undefined;
  /** As the store will be given it: the span of one receipt partition. @default 21600000 (6 h) */
  readonly receiptPartitionMs?: number;
  readonly onProgress?: MigrationProgress;
}

const TYPES = LEDGER_COLUMN_TYPES;

/** A batch of rows as one INSERT: a column array per parameter, unnested side by side. */
function insertColumns(table: string, columns: readonly (keyof typeof TYPES)[]): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${TYPES[c]}[]`).join(', ')})`;
}

function columnsOf(rows: unknown[][], width: number): unknown[][] {
  return Array.from({ length: width }, (_, i) => rows.map((r) => r[i]));
}

/**
 * Carries a ledger table made by an earlier oncely over to the current layout: from receipts with
 * hex-text fingerprints and tombstones in place, or from a receipts table not partitioned by time
 * (next to a tombstone table, kept as it is). In one transaction, under the advisory lock the
 * store's own set-up takes (a server starting meanwhile waits, then finds the current layout): the
 * earlier table and its indexes are renamed aside, the current tables and the receipt partitions
 * its rows need are made, every row is read and written with the store's own codec (receipts and
 * claims into the partitioned table, tombstones into the tombstone table), counted, and the
 * earlier table dropped only when all arrived. Any error rolls all of it back: nothing changes.
 * Stop servers of the earlier oncely first: renaming waits for their statements and then keeps
 * them out until the migration ends.
 */
export async function migratePostgresLedger(
  pool: PgPool,
  options: PostgresMigrateOptions = {},
): Promise<LedgerMigration> {
  const tableName = checkIdentifier('table', options.table ?? DEFAULT_POSTGRES_STORE_OPTIONS.table);
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const partitionMs =
    options.receiptPartitionMs ?? DEFAULT_POSTGRES_STORE_OPTIONS.receiptPartitionMs;
  if (!Number.isSafeInteger(partitionMs) || partitionMs < 1000)
    throw new InvalidOptionError(
      'receiptPartitionMs',
      partitionMs,
      'a whole number of milliseconds >= 1000',
    );
  const tables = postgresLedgerTables(schema, tableName);
  const asideName = `${tableName}_migrating`;
  const aside = qualified(tables, asideName);
  const client = await connectHeard(pool);
  const q = async (text: string, values: unknown[] = []) => {
    const result = await client.query(text, values);
    return { rows: result.rows as unknown[], rowCount: result.rowCount ?? 0 };
  };
  try {
    await q('BEGIN');
    try {
      const result = await migrateIn(
        { tables, asideName, aside, partitionMs, onProgress: options.onProgress },
        q,
        client,
      );
      await q('COMMIT');
      return result;
    } catch (error) {
      await q('ROLLBACK').catch(() => {});
      throw error;
    }
  } finally {
    client.release();
  }
}

/** What one migration works on. */
interface MigrationTarget {
  readonly tables: PostgresLedgerTables;
  readonly asideName: string;
  readonly aside: string;
  readonly partitionMs: number;
  readonly onProgress: ((done: number, total: number) => void) | undefined;
}

type MigrationQuery = (
  text: string,
  values?: unknown[],
) => Promise<{ rows: unknown[]; rowCount: number }>;

/** The migration inside its transaction (see migratePostgresLedger). */
async function migrateIn(
  target: MigrationTarget,
  query: MigrationQuery,
  conn: PgQueryable,
): Promise<LedgerMigration> {
  const { tables, asideName, aside, partitionMs } = target;
  await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${tables.live}`]);
  const layout = await postgresLedgerLayout(conn, tables);
  const table = tables.live;
  if (layout === 'missing' || layout === 'current')
    return { table, found: layout, receipts: 0, tombstones: 0 };
  const { rows: cols } = await query(
    'SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped',
    [table],
  );
  const missing = missingLedgerColumns((cols as Array<{ attname: string }>).map((c) => c.attname));
  if (missing.length > 0)
    throw new LedgerMigrationError(table, `it has no column ${missing.join(', ')}`);
  const { rows: inTheWay } = await query(
    `SELECT to_regclass($1) IS NOT NULL AS aside, (SELECT relkind FROM pg_class WHERE oid = to_regclass($2)) AS tombstones`,
    [aside, tables.tombstones],
  );
  const found = inTheWay[0] as { aside: boolean; tombstones: string | null };
  if (found.aside) throw new LedgerMigrationError(table, `a table ${aside} is in the way`);
  if (found.tombstones !== null && found.tombstones !== 'p')
    throw new LedgerMigrationError(
      table,
      `${tables.tombstones} exists and is not a tombstone table partitioned by time`,
    );

  // Aside, with its indexes renamed too: the current layout's indexes take their names.
  await query(`ALTER TABLE ${table} RENAME TO "${asideName}"`);
  const { rows: indexes } = await query(
    `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass`,
    [aside],
  );
  let n = 0;
  for (const { relname } of indexes as Array<{ relname: string }>)
    await query(`ALTER INDEX ${qualified(tables, relname)} RENAME TO "${asideName}_${++n}"`);
  for (const ddl of postgresLedgerSchema(tables)) await query(ddl);

  // A partition for every span of first sightings the live rows have.
  const { rows: spans } = await query(
    `SELECT DISTINCT (first_seen_at / $1::bigint) * $1::bigint AS t FROM ${aside} WHERE state <> 'expired'`,
    [partitionMs],
  );
  const partitions = postgresReceiptPartitions(tables, partitionMs, query, (fn) => fn(query));
  await partitions.ensure((spans as Array<{ t: string }>).map((s) => Number(s.t)));

  const { total, receipts, tombstones } = await copyRows(target, query);
  if (receipts + tombstones !== total)
    throw new LedgerMigrationError(table, `${receipts + tombstones} of its ${total} rows arrived`);
  await query(`DROP TABLE ${aside}`);
  return { table, found: 'earlier', receipts, tombstones };
}

/** Every row of the table aside, into the current tables with the store's codec: counted. */
async function copyRows(
  { tables, aside, onProgress }: MigrationTarget,
  query: MigrationQuery,
): Promise<{ total: number; receipts: number; tombstones: number }> {
  const table = tables.live;
  const { rows: counted } = await query(`SELECT count(*) AS n FROM ${aside}`);
  const total = Number((counted[0] as { n: string }).n);
  const putLive = insertColumns(table, LEDGER_COLUMNS);
  const putTombstone = insertColumns(tables.tombstones, TOMBSTONE_COLUMNS);
  const select = `SELECT ${LEDGER_COLUMNS.join(', ')} FROM ${aside}`;
  let receipts = 0;
  let tombstones = 0;
  // Keyset pages in primary-key order.
  for (let after: [unknown, unknown] | undefined; ; ) {
    const { rows } = (
      after === undefined
        ? await query(`${select} ORDER BY scope, key LIMIT ${MIGRATION_BATCH_ROWS}`)
        : await query(
            `${select} WHERE (scope, key) > ($1, $2) ORDER BY scope, key LIMIT ${MIGRATION_BATCH_ROWS}`,
            after,
          )
    ) as { rows: LedgerRow[] };
    if (rows.length === 0) break;
    const live: unknown[][] = [];
    const buried: unknown[][] = [];
    for (const row of rows) {
      const moved = entryOfEarlierRow(table, row);
      if ('live' in moved) live.push(entryValues(moved.live));
      else buried.push(tombstoneValues(moved.tombstone));
    }
    if (live.length > 0)
      receipts += (await query(putLive, columnsOf(live, LEDGER_COLUMNS.length))).rowCount;
    if (buried.length > 0)
      tombstones += (await query(putTombstone, columnsOf(buried, TOMBSTONE_COLUMNS.length)))
        .rowCount;
    const last = rows.at(-1)!;
    after = [last.scope, last.key];
    onProgress?.(receipts + tombstones, total);
  }
  return { total, receipts, tombstones };
}
