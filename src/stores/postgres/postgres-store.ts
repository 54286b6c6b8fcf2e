import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion } from '../../ledger/ledger-entry.js';
import type { LedgerStore } from '../../ledger/ledger-store.js';
import { LEDGER_COLUMNS, checkIdentifier, entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { StoreClosedError, TransactionEndedError } from '../store-errors.js';
import { LedgerLayoutError } from '../ledger-layout-error.js';
import type { PgPool, PgPoolClient, PgQueryable, PgTx } from './pg-pool.js';
import { postgresSql } from './postgres-sql.js';
import { postgresSweep } from './postgres-sweep.js';
import { postgresGetSql, postgresLedgerTables, postgresTombstoneSchema, postgresTombstoneWrites } from './postgres-tombstones.js';

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
}

export interface PostgresStore extends LedgerStore<PgTx> {
  /** The table's name as used in SQL, schema-qualified and quoted. */
  readonly table: string;
  /** The partitioned tombstone table's name, schema-qualified and quoted (postgres-tombstones.ts). */
  readonly tombstoneTable: string;
}

export const DEFAULT_POSTGRES_STORE_OPTIONS = { table: 'oncely_ledger', tombstonePartitionMs: 86_400_000 } as const;

/**
 * The ledger on PostgreSQL through a `pg` Pool. Claims are single statements that commit at once
 * (INSERT ... ON CONFLICT DO NOTHING, and compare-and-swap UPDATEs on (token, state)), so every
 * worker, in any process, sees an in-flight key at once. The effect runs on one pooled client
 * between BEGIN and COMMIT; it first locks its ledger row (SELECT ... FOR UPDATE), so a takeover
 * by another worker waits for that transaction and then finds the row changed.
 *
 * Durability: every transaction (the effect + receipt one, the sweep, set-up) commits with
 * synchronous commit: COMMIT returns after its WAL is flushed. The single-row bookkeeping writes
 * (`insert`, `swap`, `remove`: claim, takeover, release, purge on access) commit asynchronously
 * (`synchronous_commit = off`): a keyed request waits for one WAL flush, not two. Why (the same
 * argument as sqlite-store.ts):
 *  1. What survives a crash is a prefix of the WAL: "If the database should crash, it will recover
 *     by replaying WAL up to the last record that was flushed ... Because the transactions are
 *     replayed in commit order, no inconsistency can be introduced" — an asynchronous commit risks
 *     "data loss, not data corruption" (https://www.postgresql.org/docs/15/wal-async-commit.html).
 *  2. A synchronous commit waits until the WAL is flushed up to its own commit record, and WAL is
 *     one sequence: every record written before it, an earlier asynchronous commit of any session
 *     included, is flushed with it. A claim returned before its effect's transaction began, so its
 *     commit record precedes the effect's, and the effect's COMMIT makes the claim durable too.
 *  3. So after a crash the ledger is in a state it really was in, at or after its last synchronous
 *     commit; only asynchronous bookkeeping done since can be lost, which brings back an earlier
 *     state: a lost claim or takeover had no effect committed after it (the key is new again, or
 *     the dead owner's expired lease is taken over again); a lost release may bring an in-flight
 *     row back until its lease expires (as when the release fails); a lost tombstone or purge is
 *     redone, retention being judged by time. A receipt is never lost: only `complete` writes it,
 *     in the effect's transaction, and `executed` is answered after that COMMIT returned.
 *  4. An asynchronous commit is a commit: other sessions see it at once, and a killed worker does
 *     not undo it (the crash test); only a crash of the server itself can lose it.
 * How: the mode "used for any one transaction depends on the value of synchronous_commit when
 * transaction commit begins" (same page), so each bookkeeping statement sets it transaction-locally
 * in its own implicit transaction: `set_config('synchronous_commit', 'off', true)` in a one-row
 * FROM/USING subquery (a WITH query that nothing references is never run). One round trip, as before,
 * and the setting ends with the statement's transaction: a pooled connection (maybe the app's
 * own) never keeps it. Every transaction starts with `BEGIN; SELECT set_config('synchronous_commit',
 * 'on', true) WHERE current_setting('synchronous_commit') = 'off'` (one round trip): a role or
 * session default of off would make receipts asynchronous, while a stronger level set for
 * replication (remote_apply, remote_write) is left as it is, and `local` still flushes locally.
 *
 * Rejected: `BEGIN; SET LOCAL synchronous_commit = off; <write>; COMMIT` around each claim: four
 * round trips instead of one for the same saving; and folding the claim into the effect's
 * transaction, which would hide the claim from other workers until the effect commits.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', options, 'an object with a pool');
  const { pool: poolOption } = options;
  if (typeof poolOption !== 'function' && typeof poolOption?.connect !== 'function') {
    throw new InvalidOptionError('pool', poolOption, 'a pg Pool or a function returning one');
  }
  const tableName = checkIdentifier('table', options.table ?? DEFAULT_POSTGRES_STORE_OPTIONS.table);
  const schema = options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const tables = postgresLedgerTables(schema, tableName);
  const table = tables.live;
  const partitionMs = options.tombstonePartitionMs ?? DEFAULT_POSTGRES_STORE_OPTIONS.tombstonePartitionMs;
  if (!Number.isSafeInteger(partitionMs) || partitionMs < 1000) {
    throw new InvalidOptionError('tombstonePartitionMs', partitionMs, 'a whole number of milliseconds >= 1000');
  }
  const ownsPool = typeof poolOption === 'function';

  let pool: PgPool | undefined;
  let ready: Promise<void> | undefined;
  let closed = false;

  const n = LEDGER_COLUMNS.length;
  const where = (from: number): string => `scope = $${from} AND key = $${from + 1} AND token = $${from + 2} AND state = $${from + 3}`;
  const set = `SET ${LEDGER_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')}`;
  const sql = {
    get: postgresGetSql(tables),
    // Bookkeeping: each commits on its own, asynchronously (see above).
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) SELECT ${LEDGER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')} FROM ${ASYNC_COMMIT} ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} ${set} FROM ${ASYNC_COMMIT} WHERE ${where(n + 1)}`,
    remove: `DELETE FROM ${table} USING ${ASYNC_COMMIT} WHERE ${where(1)}`,
    // The receipt: inside the effect's transaction, which commits synchronously.
    complete: `UPDATE ${table} ${set} WHERE ${where(n + 1)}`,
    hold: `SELECT 1 FROM ${table} WHERE ${where(1)} FOR UPDATE`,
  };
  const tombstones = postgresTombstoneWrites(tables, ASYNC_COMMIT, query);
  const sweeper = postgresSweep(tables, partitionMs, query);

  function thePool(): PgPool {
    if (closed) throw new StoreClosedError('postgres');
    return (pool ??= typeof poolOption === 'function' ? poolOption() : poolOption);
  }

  /** Creates the schema and table once; a failure is retried by the next call. */
  function setUp(): Promise<void> {
    ready ??= inTransaction(thePool(), async (client) => {
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
      await client.query(`CREATE INDEX IF NOT EXISTS "${tableName}_expires_at" ON ${table} (expires_at)`);
      for (const ddl of postgresTombstoneSchema(tables)) await client.query(ddl);
      const { rows } = await client.query(
        `SELECT data_type FROM information_schema.columns WHERE table_schema = coalesce($1, current_schema()) AND table_name = $2 AND column_name = 'fingerprint'`,
        [schema ?? null, tableName],
      );
      if ((rows[0] as { data_type?: string } | undefined)?.data_type === 'text') throw new LedgerLayoutError('postgres', table);
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  async function query(text: string, values: unknown[] = []): Promise<{ rows: unknown[]; rowCount: number }> {
    await setUp();
    const result = await thePool().query(text, values);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }

  const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

  return {
    name: 'postgres',
    table,
    tombstoneTable: tables.tombstones,
    // A step locks only the rows it moves (SKIP LOCKED): larger steps cost writers nothing.
    sweepBatchRows: 2000,

    // Connects and creates the table: a bad URL or an unreachable server fails here.
    ready: () => setUp(),

    sql: postgresSql,

    async get(scope, key) {
      const { rows } = await query(sql.get, [scope, key]);
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },

    insert: async (entry) => (await query(sql.insert, entryValues(entry))).rowCount === 1,

    async swap(expected, next) {
      if (expected.state === 'expired') return tombstones.revive(next);
      if (next.state === 'expired') return tombstones.bury(expected, next);
      return (await query(sql.swap, [...entryValues(next), ...versionParams(expected)])).rowCount === 1;
    },

    async remove(expected) {
      if (expected.state === 'expired') return tombstones.remove(expected);
      return (await query(sql.remove, versionParams(expected))).rowCount === 1;
    },

    async transaction(fn) {
      await setUp();
      return inTransaction(thePool(), async (client) => {
        let active = true;
        const tx: PgTx = {
          async query<R>(text: string, values?: unknown[]) {
            if (!active) throw new TransactionEndedError('postgres');
            const result = await client.query(text, values);
            return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
          },
        };
        try {
          return await fn(tx);
        } finally {
          active = false;
        }
      });
    },

    hold: async (tx, expected) => (await tx.query(sql.hold, versionParams(expected))).rowCount === 1,

    complete: async (tx, expected, next) => (await tx.query(sql.complete, [...entryValues(next), ...versionParams(expected)])).rowCount === 1,

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

/**
 * BEGIN (synchronous, see above), `fn` on one client, COMMIT; ROLLBACK when anything throws. A client whose BEGIN or
 * ROLLBACK failed is destroyed rather than returned to the pool in an unknown state.
 */
async function inTransaction<T>(pool: PgPool, fn: (client: PgQueryable) => Promise<T>): Promise<T> {
  const client: PgPoolClient = await pool.connect();
  try {
    await client.query(BEGIN_SYNCHRONOUS);
  } catch (error) {
    client.release(true);
    throw error;
  }
  let broken = false;
  try {
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
