import { InvalidOptionError } from '../../../contract/errors.js';
import { DURABILITIES, type Durability, type LedgerStore } from '../../../ledger/ledger-store.js';
import type { DeferredCommit } from '../../../ledger/deferred-writes.js';
import type { CommitAlone } from '../../../ledger/ledger-store.js';
import { checkIdentifier } from '../ledger-row.js';
import type { PgPool, PgTx } from '../../postgres-driver/pg-pool.js';
import type { DeferredGroupOptions } from './postgres-deferred-groups.js';
import { postgresLedgerTables, type PostgresLedgerTables } from './postgres-tombstones.js';

export interface PostgresStoreOptions {
  /**
   * A `pg` Pool, or a function that makes one on first use. The store ends a pool it made
   * itself, never one it was given. Any pg from 8.11 on; a pool made with `pipeline: true`
   * (pg 8.17 and later, as `openPostgresPool` makes it) sends a request's statements in fewer
   * round trips (send-statements.ts).
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
  /**
   * Deferred commits, shared by concurrent requests (postgres-deferred-groups.ts), and a
   * statement committed alone (one prepared round trip).
   */
  readonly capabilities: {
    readonly deferredCommit: DeferredCommit;
    readonly commitAlone: CommitAlone;
  };
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

/** The options checked once, at the edge, with the defaults filled in. */
export interface ResolvedPostgresStoreOptions {
  readonly pool: PgPool | (() => PgPool);
  readonly schema: string | undefined;
  readonly tables: PostgresLedgerTables;
  readonly receiptPartitionMs: number;
  readonly tombstonePartitionMs: number;
  readonly durability: Durability;
  /** The statement that sets the commit level of the effect + receipt transaction. */
  readonly commitLevel: string;
  readonly deferredGroups: DeferredGroupOptions | undefined;
}

/** The longest ledger table name whose partitions' names stay within PostgreSQL's 63 bytes. */
const MAX_TABLE_NAME = 37;

/**
 * The commit level, durable: the transaction commits synchronously even where the session or role
 * default is off; a stronger level (remote_write, remote_apply) is kept. PostgreSQL reads the
 * setting at COMMIT, so it is set last: in the receipt's statement, or just before a COMMIT
 * without a receipt. Transaction-local: the client leaves as it came.
 */
export const RAISE_TO_SYNCHRONOUS = `SELECT set_config('synchronous_commit', 'on', true) WHERE current_setting('synchronous_commit') = 'off'`;
/** The commit level, 'process' durability: the transaction commits without waiting for its WAL flush. */
export const LOWER_TO_ASYNCHRONOUS = `SELECT set_config('synchronous_commit', 'off', true)`;

export function resolvePostgresStoreOptions(
  options: PostgresStoreOptions,
): ResolvedPostgresStoreOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with a pool');
  const { pool } = options;
  if (typeof pool !== 'function' && typeof pool?.connect !== 'function')
    throw new InvalidOptionError('pool', pool, 'a pg Pool or a function returning one');
  const table = checkIdentifier('table', options.table ?? DEFAULT_POSTGRES_STORE_OPTIONS.table);
  // Partition names add up to 26 characters to it, and PostgreSQL cuts names at 63.
  if (table.length > MAX_TABLE_NAME)
    throw new InvalidOptionError(
      'table',
      table,
      `an SQL identifier of at most ${MAX_TABLE_NAME} characters (its partitions are named after it)`,
    );
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const durability = options.durability ?? DEFAULT_POSTGRES_STORE_OPTIONS.durability;
  if (!DURABILITIES.includes(durability))
    throw new InvalidOptionError('durability', durability, DURABILITIES.join(' or '));
  return {
    pool,
    schema,
    tables: postgresLedgerTables(schema, table),
    receiptPartitionMs: spanOption(options, 'receiptPartitionMs'),
    tombstonePartitionMs: spanOption(options, 'tombstonePartitionMs'),
    durability,
    commitLevel: durability === 'durable' ? RAISE_TO_SYNCHRONOUS : LOWER_TO_ASYNCHRONOUS,
    deferredGroups: options.deferredGroups,
  };
}

function spanOption(
  options: PostgresStoreOptions,
  name: 'receiptPartitionMs' | 'tombstonePartitionMs',
): number {
  const ms = options[name] ?? DEFAULT_POSTGRES_STORE_OPTIONS[name];
  if (!Number.isSafeInteger(ms) || ms < 1000)
    throw new InvalidOptionError(name, ms, 'a whole number of milliseconds >= 1000');
  return ms;
}
