import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion, InFlightEntry } from '../../ledger/ledger-entry.js';
import {
  DURABILITIES,
  type ClaimAttempt,
  type Durability,
  type LedgerStore,
} from '../../ledger/ledger-store.js';
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
import { columnArrays, postgresClaimFunction } from './postgres-claim.js';
import { postgresDeferredCommit } from './postgres-deferred.js';
import { deferredGroups, type DeferredGroupOptions } from './postgres-deferred-groups.js';
import { claimBatcher, type ClaimFound } from './postgres-claim-batch.js';
import { postgresLedgerLayout, postgresLedgerSchema } from './postgres-ledger-schema.js';
import { postgresReceiptPartitions, type Transact } from './postgres-receipt-partitions.js';
import { postgresSql } from './postgres-sql.js';
import { postgresSweep } from './postgres-sweep.js';
import { finisherOf, lazyTransaction } from './postgres-transaction.js';
import {
  postgresGetSql,
  postgresLedgerTables,
  postgresTombstoneWrites,
} from './postgres-tombstones.js';
import { isPostgresUnavailable } from './postgres-unavailable.js';

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
   * The time span of one receipt partition, by first sighting (postgres-receipt-partitions.ts):
   * receipts go a partition at a time, once every one in it is past retention, so a receipt stays
   * up to about this long past its retention. About retentionMs / 4 keeps five or six partitions.
   * @default 21600000 (6 h)
   */
  readonly receiptPartitionMs?: number;
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
  /**
   * Deferred commits of concurrent requests share transactions: those that arrive while
   * `inFlight` are on their way go together as the next, up to `maxRequests` in one
   * (postgres-deferred-groups.ts). A member whose group does not commit is committed again alone,
   * so each request's answer is its own. `{ maxRequests: 1 }` commits every request alone.
   * @default { maxRequests: 32, inFlight: 2 }
   */
  readonly deferredGroups?: DeferredGroupOptions;
}

export interface PostgresStore extends LedgerStore<PgTx> {
  /** The table's name as used in SQL, schema-qualified and quoted. */
  readonly table: string;
  /** The partitioned tombstone table's name, schema-qualified and quoted (postgres-tombstones.ts). */
  readonly tombstoneTable: string;
  readonly durability: Durability;
  /**
   * Makes receipt partitions cover first sightings in [fromMs, toMs): before rows are loaded into
   * the table other than through the store (an import, a benchmark). Claims make their own.
   */
  preparePartitions(fromMs: number, toMs: number): Promise<void>;
}

export const DEFAULT_POSTGRES_STORE_OPTIONS = {
  table: 'oncely_ledger',
  receiptPartitionMs: 21_600_000,
  tombstonePartitionMs: 86_400_000,
  durability: 'durable',
} as const;

/**
 * The ledger on PostgreSQL through a `pg` Pool, in as few round trips as the driver allows:
 * - a claim is one statement that inserts the in-flight row or returns the committed one (a
 *   PL/pgSQL function, postgres-claim.ts), committed on its own and asynchronously, so every
 *   worker in every process sees the key at once and a new key costs one round trip; the claims
 *   of concurrent requests share that statement (postgres-claim-batch.ts);
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
  // Partition names add up to 26 characters to it, and PostgreSQL cuts names at 63.
  if (tableName.length > MAX_TABLE_NAME)
    throw new InvalidOptionError(
      'table',
      tableName,
      `an SQL identifier of at most ${MAX_TABLE_NAME} characters (its partitions are named after it)`,
    );
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const tables = postgresLedgerTables(schema, tableName);
  const table = tables.live;
  const spanOption = (name: 'receiptPartitionMs' | 'tombstonePartitionMs'): number => {
    const ms = options[name] ?? DEFAULT_POSTGRES_STORE_OPTIONS[name];
    if (!Number.isSafeInteger(ms) || ms < 1000)
      throw new InvalidOptionError(name, ms, 'a whole number of milliseconds >= 1000');
    return ms;
  };
  const receiptPartitionMs = spanOption('receiptPartitionMs');
  const partitionMs = spanOption('tombstonePartitionMs');
  const ownsPool = typeof poolOption === 'function';
  const durability = options.durability ?? DEFAULT_POSTGRES_STORE_OPTIONS.durability;
  if (!DURABILITIES.includes(durability))
    throw new InvalidOptionError('durability', durability, DURABILITIES.join(' or '));
  const commitLevel = durability === 'durable' ? RAISE_TO_SYNCHRONOUS : LOWER_TO_ASYNCHRONOUS;

  let pool: PgPool | undefined;
  let ready: Promise<void> | undefined;
  let closed = false;

  const n = LEDGER_COLUMNS.length;
  const where = (from: number): string =>
    `scope = $${from} AND key = $${from + 1} AND token = $${from + 2} AND state = $${from + 3}`;
  const set = `SET ${LEDGER_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')}`;
  const claimFunction = postgresClaimFunction(tables);
  const sql = {
    get: postgresGetSql(tables),
    // Lookup + claim of a batch in one statement: inserts, or returns the committed row
    // (postgres-claim.ts).
    claims: claimFunction.call,
    // Bookkeeping: each commits on its own, asynchronously (docs/durability.md).
    swap: `UPDATE ${table} ${set} FROM ${ASYNC_COMMIT} WHERE ${where(n + 1)}`,
    renew: `UPDATE ${table} SET lease_expires_at = $1 FROM ${ASYNC_COMMIT} WHERE ${where(2)}`,
    remove: `DELETE FROM ${table} USING ${ASYNC_COMMIT} WHERE ${where(1)}`,
    // The receipt: inside the effect's transaction.
    complete: `UPDATE ${table} ${set} WHERE ${where(n + 1)}`,
    // The same, sent with the COMMIT behind it: it must fail when the key is no longer ours, so
    // that the COMMIT rolls the effect back. A division by the rows it changed fails with 22012
    // exactly then, at run time (RECEIPT_LOST, postgres-transaction.ts). It also sets the commit's
    // level (RAISE_TO_SYNCHRONOUS below): the last statement before COMMIT, nothing changes it after.
    receipt: `WITH done AS (UPDATE ${table} ${set} WHERE ${where(n + 1)} RETURNING 1) SELECT 1 / count(*)::int AS completed, (${commitLevel}) AS commit_level FROM done`,
  };
  const tombstones = postgresTombstoneWrites(tables, ASYNC_COMMIT, raw);
  const transact: Transact = async (fn) => {
    await setUp();
    return inTransaction(thePool(), RAISE_TO_SYNCHRONOUS, (client) => fn(clientQuery(client)));
  };
  const receipts = postgresReceiptPartitions(tables, receiptPartitionMs, raw, transact);
  const sweeper = postgresSweep(
    tables,
    partitionMs,
    { ...receipts, partitionMs: receiptPartitionMs },
    raw,
  );
  /** Prepared once per pooled connection: PostgreSQL parses and plans each ledger statement once. */
  const prefix = `oncely_${hashName(table)}`;
  const deferredCommit = postgresDeferredCommit(tables, commitLevel, (use) => `${prefix}_${use}`);
  const deferred = deferredGroups(
    (members) => deferredCommit(thePool(), members),
    options.deferredGroups,
  );
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
    ready ??= inTransaction(thePool(), RAISE_TO_SYNCHRONOUS, async (client) => {
      // Two processes starting together would race on CREATE TABLE IF NOT EXISTS (a unique
      // violation on pg_type); an advisory lock on the table's name lets one go first.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${table}`]);
      await checkLayout(client);
      if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      for (const ddl of postgresLedgerSchema(tables)) await client.query(ddl);
    }).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  }

  /** A table made by an earlier oncely is refused before anything is created next to it. */
  async function checkLayout(client: PgQueryable): Promise<void> {
    const layout = await postgresLedgerLayout(client, tables);
    if (layout === 'text') throw new LedgerLayoutError('postgres', table);
    if (layout === 'flat')
      throw new LedgerLayoutError('postgres', table, 'is not partitioned by time');
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

  /** Makes sure a receipt partition takes rows first seen at `firstSeenAt` (no read when known). */
  async function inPartition(firstSeenAt: number): Promise<void> {
    await setUp();
    await receipts.ensure([firstSeenAt]);
  }

  /**
   * Runs a write that puts a row first seen at `firstSeenAt` in its partition. Should the row find
   * none (another process dropped a partition this one still knew of: a clock far behind), the
   * partitions are read again and the write tried once more.
   */
  async function placed<T>(firstSeenAt: number, write: () => Promise<T>): Promise<T> {
    await inPartition(firstSeenAt);
    try {
      return await write();
    } catch (error) {
      if ((error as { code?: string }).code !== NO_PARTITION) throw error;
      receipts.forget();
      await inPartition(firstSeenAt);
      return write();
    }
  }

  /** Claims of concurrent requests go together, one statement for all (postgres-claim-batch.ts). */
  const claims = claimBatcher(async (entries) => {
    const { rows: found } = await query('claims', columnArrays(entries));
    const answers: ClaimFound[] = entries.map(() => undefined);
    for (const row of found as Array<LedgerRow & { i: number }>) answers[row.i - 1] = row;
    return answers;
  });

  async function claim(entry: InFlightEntry): Promise<ClaimAttempt> {
    const found = await placed(entry.firstSeenAt, () => claims.claim(entry));
    return found === undefined ? { won: true } : { won: false, existing: rowToEntry(found) };
  }

  return {
    name: 'postgres',
    isUnavailable: isPostgresUnavailable,
    table,
    tombstoneTable: tables.tombstones,
    durability,
    // A step copies tombstones (inserts) and drops whole partitions: it locks no row a request
    // needs, only the table for a moment when a partition goes (postgres-receipt-partitions.ts).
    sweepBatchRows: 2000,

    // Connects and creates the table: a bad URL or an unreachable server fails here.
    ready: () => setUp(),

    sql: postgresSql,

    async get(scope, key) {
      const { rows } = await query('get', [scope, key]);
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },

    claim,

    async swap(expected, next) {
      // A key claimed again after its tombstone: a fresh live row (which wins over the tombstone),
      // claimed like a new key so that it stays unique.
      if (expected.state === 'expired') return (await claim(next as InFlightEntry)).won;
      if (next.state === 'expired') return tombstones.bury(expected, next);
      // A takeover after retention starts the key afresh: its row moves to the partition of now.
      return placed(next.firstSeenAt, () =>
        casWrite(() => query('swap', [...entryValues(next), ...versionParams(expected)])),
      );
    },

    renew: (expected, leaseExpiresAt) =>
      casWrite(() => query('renew', [leaseExpiresAt, ...versionParams(expected)])),

    async remove(expected) {
      if (expected.state === 'expired') return tombstones.remove(expected);
      return casWrite(() => query('remove', versionParams(expected)));
    },

    preparePartitions: async (fromMs, toMs) => {
      await setUp();
      const instants = [];
      for (let t = fromMs; t < toMs; t += receiptPartitionMs) instants.push(t);
      await receipts.ensure([...instants, toMs - 1]);
    },

    async transaction(fn) {
      await setUp();
      return lazyTransaction(thePool(), commitLevel, fn);
    },

    async complete(tx, expected, next) {
      const values = [...entryValues(next), ...versionParams(expected)];
      // Ours (always, through the ledger): the receipt and the COMMIT in one round trip.
      const finish = finisherOf(tx);
      if (finish !== undefined)
        return casWrite(async () => ({
          rowCount: (await finish(named('receipt', values))) ? 1 : 0,
        }));
      return casWrite(() => tx.query(named('complete', values)));
    },

    // A deferred effect's receipt and writes: one transaction, one round trip (postgres-deferred.ts),
    // shared with the deferred commits of concurrent requests (postgres-deferred-groups.ts).
    commitDeferred: (entry, writes) =>
      placed(entry.firstSeenAt, () => deferred.commit({ entry, writes })),

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

/** A client's query as the partition and sweep code takes it. */
function clientQuery(client: PgQueryable) {
  return async (text: string, values: unknown[] = []) => {
    const result = await client.query(text, values);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  };
}

/** The longest ledger table name whose partitions' names stay within PostgreSQL's 63 bytes. */
const MAX_TABLE_NAME = 37;

/** SQLSTATE of "no partition of relation ... found for row" (check_violation). */
const NO_PARTITION = '23514';

/**
 * A compare-and-swap on the owner token: true when it changed the row. A row that a concurrent
 * takeover moved to another partition while this statement waited for it is an error in
 * PostgreSQL ("tuple to be locked was already moved to another partition due to concurrent
 * update", a serialization failure): here it is what it means, someone else wrote first.
 */
async function casWrite(write: () => Promise<{ rowCount: number }>): Promise<boolean> {
  try {
    return (await write()).rowCount === 1;
  } catch (error) {
    if ((error as { code?: string }).code === '40001') return false;
    throw error;
  }
}

/**
 * A one-row subquery whose evaluation makes the statement's own (implicit) transaction commit
 * asynchronously; transaction-local, so it ends with that commit.
 */
const ASYNC_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit`;

/**
 * The commit level, durable: the transaction commits synchronously even where the session or role
 * default is off; a stronger level (remote_write, remote_apply) is kept. PostgreSQL reads the
 * setting at COMMIT, so it is set last: in the receipt's statement (no statement of its own), or
 * just before a COMMIT without a receipt. Transaction-local: the client leaves as it came.
 */
const RAISE_TO_SYNCHRONOUS = `SELECT set_config('synchronous_commit', 'on', true) WHERE current_setting('synchronous_commit') = 'off'`;
/** The commit level, 'process' durability: the transaction commits without waiting for its WAL flush. */
const LOWER_TO_ASYNCHRONOUS = `SELECT set_config('synchronous_commit', 'off', true)`;

/** A short stable name for the table, for prepared statement names (at most 63 bytes in all). */
function hashName(table: string): string {
  let h = 0;
  for (let i = 0; i < table.length; i++) h = (Math.imul(h, 31) + table.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}

/** BEGIN, `fn` on one client, COMMIT; ROLLBACK when anything throws (the store's own set-up). */
async function inTransaction<T>(
  pool: PgPool,
  commitLevel: string,
  fn: (client: PgQueryable) => Promise<T>,
): Promise<T> {
  return lazyTransaction(pool, commitLevel, async (tx) => {
    await tx.query('SELECT 1');
    return fn(tx as unknown as PgQueryable);
  });
}
