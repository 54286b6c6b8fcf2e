import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion } from '../../ledger/ledger-entry.js';
import { DURABILITIES, type Durability, type LedgerStore } from '../../ledger/ledger-store.js';
import {
  LEDGER_COLUMNS,
  checkIdentifier,
  entryValues,
  rowToEntry,
  type LedgerRow,
} from '../ledger-row.js';
import { StoreClosedError } from '../store-errors.js';
import { LedgerLayoutError } from '../ledger-layout-error.js';
import type { PgPool, PgQueryable, PgQueryConfig, PgTx } from './pg-pool.js';
import { postgresSql } from './postgres-sql.js';
import { postgresSweep } from './postgres-sweep.js';
import { finisherOf, lazyTransaction } from './postgres-transaction.js';
import {
  postgresGetSql,
  postgresLedgerTables,
  postgresTombstoneSchema,
  postgresTombstoneWrites,
} from './postgres-tombstones.js';

export interface PostgresStoreOptions {
  /**
   * A `pg` Pool, or a function that makes one on first use. The store ends a pool it made
   * itself, never one it was given.
   */
  readonly pool: PgPool | (() => PgPool);
  /** The ledger's table, created if missing. @default 'oncely_ledger' */
  readonly table?: string;
  /** The table's schema, created if missing. @default undefined (the connection's search_path) */
  readonly schema?: string | undefined;
  /**
   * The time span of one tombstone partition: tombstones go a partition at a time, up to this
   * long after their end. About tombstoneMs / 7 keeps eight or nine partitions. @default 86400000 (1 day)
   */
  readonly tombstonePartitionMs?: number;
  /**
   * 'durable': the effect + receipt transaction commits synchronously (COMMIT returns after its
   * WAL is flushed). 'process': synchronous_commit = off for it too: survives a crash of the app,
   * and a crash of the server loses at most its last few hundred ms (docs/durability.md).
   * @default 'durable'
   */
  readonly durability?: Durability;
}

export interface PostgresStore extends LedgerStore<PgTx> {
  /** The table's name as used in SQL, schema-qualified and quoted. */
  readonly table: string;
  /** The partitioned tombstone table's name, schema-qualified and quoted (postgres-tombstones.ts). */
  readonly tombstoneTable: string;
  readonly durability: Durability;
}

export const DEFAULT_POSTGRES_STORE_OPTIONS = {
  table: 'oncely_ledger',
  tombstonePartitionMs: 86_400_000,
  durability: 'durable',
} as const;

/**
 * The ledger on PostgreSQL through a `pg` Pool, in as few round trips as the driver allows:
 * - a claim is one statement that inserts the in-flight row or returns the committed one
 *   (INSERT ... ON CONFLICT DO NOTHING in a CTE), committed on its own and asynchronously, so
 *   every worker in every process sees the key at once and a new key costs one round trip;
 * - the effect's transaction begins at its first statement (or at the receipt), not before: an
 *   effect that first awaits something else holds no pooled connection meanwhile;
 * - the receipt is a compare-and-swap on the owner token in the effect's transaction, which
 *   commits synchronously in durable mode: the WAL flush of that COMMIT also makes the claim
 *   before it durable (one flush per request). Statements are prepared once per connection.
 * Why the asynchronous claim is safe: docs/durability.md.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with a pool');
  const { pool: poolOption } = options;
  if (typeof poolOption !== 'function' && typeof poolOption?.connect !== 'function') {
    throw new InvalidOptionError('pool', poolOption, 'a pg Pool or a function returning one');
  }
  const tableName = checkIdentifier('table', options.table ?? DEFAULT_POSTGRES_STORE_OPTIONS.table);
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const tables = postgresLedgerTables(schema, tableName);
  const table = tables.live;
  const partitionMs =
    options.tombstonePartitionMs ?? DEFAULT_POSTGRES_STORE_OPTIONS.tombstonePartitionMs;
  if (!Number.isSafeInteger(partitionMs) || partitionMs < 1000) {
    throw new InvalidOptionError(
      'tombstonePartitionMs',
      partitionMs,
      'a whole number of milliseconds >= 1000',
    );
  }
  const ownsPool = typeof poolOption === 'function';
  const durability = options.durability ?? DEFAULT_POSTGRES_STORE_OPTIONS.durability;
  if (!DURABILITIES.includes(durability))
    throw new InvalidOptionError('durability', durability, DURABILITIES.join(' or '));
  const begin = durability === 'durable' ? BEGIN_SYNCHRONOUS : BEGIN_ASYNCHRONOUS;

  let pool: PgPool | undefined;
  let ready: Promise<void> | undefined;
  let closed = false;

  const n = LEDGER_COLUMNS.length;
  const where = (from: number): string =>
    `scope = $${from} AND key = $${from + 1} AND token = $${from + 2} AND state = $${from + 3}`;
  const set = `SET ${LEDGER_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')}`;
  const columns = LEDGER_COLUMNS.join(', ');
  const sql = {
    get: postgresGetSql(tables),
    // Lookup + claim in one statement: inserts, or returns the committed row (nulls and won =
    // false when a concurrent claim committed after this statement's snapshot: read again).
    claim: `WITH ins AS (INSERT INTO ${table} (${columns}) SELECT ${LEDGER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')} FROM ${ASYNC_COMMIT} ON CONFLICT (scope, key) DO NOTHING RETURNING 1)
      SELECT EXISTS (SELECT 1 FROM ins) AS won, t.* FROM (SELECT 1) AS one LEFT JOIN ${table} t ON t.scope = $1 AND t.key = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
    // Bookkeeping: each commits on its own, asynchronously (docs/durability.md).
    swap: `UPDATE ${table} ${set} FROM ${ASYNC_COMMIT} WHERE ${where(n + 1)}`,
    renew: `UPDATE ${table} SET lease_expires_at = $1 FROM ${ASYNC_COMMIT} WHERE ${where(2)}`,
    remove: `DELETE FROM ${table} USING ${ASYNC_COMMIT} WHERE ${where(1)}`,
    // The receipt: inside the effect's transaction.
    complete: `UPDATE ${table} ${set} WHERE ${where(n + 1)}`,
    // The same, sent with the COMMIT behind it: it must fail when the key is no longer ours, so
    // that the COMMIT rolls the effect back. A division by the rows it changed fails with 22012
    // exactly then, at run time (RECEIPT_LOST, postgres-transaction.ts).
    receipt: `WITH done AS (UPDATE ${table} ${set} WHERE ${where(n + 1)} RETURNING 1) SELECT 1 / count(*)::int AS completed FROM done`,
  };
  const tombstones = postgresTombstoneWrites(tables, ASYNC_COMMIT, raw);
  const sweeper = postgresSweep(tables, partitionMs, raw);
  /** Prepared once per pooled connection: PostgreSQL parses and plans each ledger statement once. */
  const prefix = `oncely_${hashName(table)}`;
  const named = (key: keyof typeof sql, values: unknown[]): PgQueryConfig => ({
    name: `${prefix}_${key}`,
    text: sql[key],
    values,
  });

  function thePool(): PgPool {
    if (closed) throw new StoreClosedError('postgres');
    return (pool ??= typeof poolOption === 'function' ? poolOption() : poolOption);
  }

  /** Creates the schema and table once; a failure is retried by the next call. */
  function setUp(): Promise<void> {
    ready ??= inTransaction(thePool(), BEGIN_SYNCHRONOUS, async (client) => {
      // Two processes starting together would race on CREATE TABLE IF NOT EXISTS (a unique
      // violation on pg_type); an advisory lock on the table's name lets one go first.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${table}`]);
      if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
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
        PRIMARY KEY (scope, key)
      )`);
      await client.query(
        `CREATE INDEX IF NOT EXISTS "${tableName}_expires_at" ON ${table} (expires_at)`,
      );
      for (const ddl of postgresTombstoneSchema(tables)) await client.query(ddl);
      const { rows } = await client.query(
        `SELECT data_type FROM information_schema.columns WHERE table_schema = coalesce($1, current_schema()) AND table_name = $2 AND column_name = 'fingerprint'`,
        [schema ?? null, tableName],
      );
      if ((rows[0] as { data_type?: string } | undefined)?.data_type === 'text')
        throw new LedgerLayoutError('postgres', table);
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  async function query(
    key: keyof typeof sql,
    values: unknown[],
  ): Promise<{ rows: unknown[]; rowCount: number }> {
    await setUp();
    const result = await thePool().query(named(key, values));
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }

  /** For the tombstone and sweep statements (postgres-tombstones.ts, postgres-sweep.ts). */
  async function raw(
    text: string,
    values: unknown[] = [],
  ): Promise<{ rows: unknown[]; rowCount: number }> {
    await setUp();
    const result = await thePool().query(text, values);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }

  const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

  return {
    name: 'postgres',
    table,
    tombstoneTable: tables.tombstones,
    durability,
    // A step locks only the rows it moves (SKIP LOCKED): larger steps cost writers nothing.
    sweepBatchRows: 2000,

    // Connects and creates the table: a bad URL or an unreachable server fails here.
    ready: () => setUp(),

    sql: postgresSql,

    async get(scope, key) {
      const { rows } = await query('get', [scope, key]);
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },

    async claim(entry) {
      const row = (await query('claim', entryValues(entry))).rows[0] as
        (LedgerRow & { won: boolean }) | undefined;
      if (row?.won === true) return { won: true };
      return {
        won: false,
        existing: row === undefined || row.scope === null ? undefined : rowToEntry(row),
      };
    },

    async swap(expected, next) {
      if (expected.state === 'expired') return tombstones.revive(next);
      if (next.state === 'expired') return tombstones.bury(expected, next);
      return (
        (await query('swap', [...entryValues(next), ...versionParams(expected)])).rowCount === 1
      );
    },

    renew: async (expected, leaseExpiresAt) =>
      (await query('renew', [leaseExpiresAt, ...versionParams(expected)])).rowCount === 1,

    async remove(expected) {
      if (expected.state === 'expired') return tombstones.remove(expected);
      return (await query('remove', versionParams(expected))).rowCount === 1;
    },

    async transaction(fn) {
      await setUp();
      return lazyTransaction(thePool(), begin, fn);
    },

    async complete(tx, expected, next) {
      const values = [...entryValues(next), ...versionParams(expected)];
      // Ours (always, through the ledger): the receipt and the COMMIT in one round trip.
      const finish = finisherOf(tx);
      if (finish !== undefined) return finish(named('receipt', values));
      return (await tx.query(named('complete', values))).rowCount === 1;
    },

    async sweep(nowMs, tombstoneMs, limit = Infinity) {
      await setUp();
      return sweeper.step(nowMs, tombstoneMs, limit);
    },

    async backlog(nowMs) {
      await setUp();
      return sweeper.backlog(nowMs);
    },

    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool && pool) await pool.end();
      pool = undefined;
    },
  };
}

/**
 * A one-row subquery whose evaluation makes the statement's own (implicit) transaction commit
 * asynchronously; transaction-local, so it ends with that commit.
 */
const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit`;

/**
 * Sent as the transaction's first message, one round trip (simple protocol, two statements): the
 * transaction commits synchronously even where the session or role default is off; a stronger
 * level (remote_write, remote_apply) is kept. Transaction-local: the client leaves as it came.
 */
const BEGIN_SYNCHRONOUS = `BEGIN; SELECT set_config('synchronous_commit', 'on', true) WHERE current_setting('synchronous_commit') = 'off'`;
/** The 'process' durability: the transaction commits without waiting for its WAL flush. */
const BEGIN_ASYNCHRONOUS = `BEGIN; SELECT set_config('synchronous_commit', 'off', true)`;

/** A short stable name for the table, for prepared statement names (at most 63 bytes in all). */
function hashName(table: string): string {
  let h = 0;
  for (let i = 0; i < table.length; i++) h = (Math.imul(h, 31) + table.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}

/** BEGIN, `fn` on one client, COMMIT; ROLLBACK when anything throws (the store's own set-up). */
async function inTransaction<T>(
  pool: PgPool,
  begin: string,
  fn: (client: PgQueryable) => Promise<T>,
): Promise<T> {
  return lazyTransaction(pool, begin, async (tx) => {
    await tx.query('SELECT 1');
    return fn(tx as unknown as PgQueryable);
  });
}
