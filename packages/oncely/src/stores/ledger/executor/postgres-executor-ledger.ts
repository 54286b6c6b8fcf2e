import { DEFAULT_LEDGER_OPTIONS } from '../../../ledger/ledger-options.js';
import type { EntryVersion, InFlightEntry } from '../../../ledger/ledger-entry.js';
import type { ClaimAttempt } from '../../../ledger/ledger-store.js';
import { entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { postgresReceiptFunction } from '../postgres/postgres-receipt-function.js';
import { postgresSingleClaimFunction } from '../postgres/postgres-single-claim.js';
import type { PgQueryable } from '../../postgres-driver/pg-pool.js';
import { setUpPostgresLedger } from '../postgres/postgres-ledger-schema.js';
import { postgresDeferredFunction } from '../postgres/postgres-deferred-function.js';
import {
  NO_PARTITION,
  placedInPartition,
  postgresReceiptPartitions,
} from '../postgres/postgres-receipt-partitions.js';
import { ASYNC_COMMIT, postgresStatements } from '../postgres/postgres-statements.js';
import { postgresSweep } from '../postgres/postgres-sweep.js';
import { postgresTombstoneWrites } from '../postgres/postgres-tombstones.js';
import type { ExecutorLedger, ExecutorLedgerOptions } from './executor-ledger.js';
import { causes, type SqlExecutor } from '../../orm/sql-executor.js';

/**
 * How the PostgreSQL ledger's statements reach the server: the pg store's own pool
 * (postgres-store.ts: prepared statements, claims of concurrent requests in one statement,
 * pipelining) or an ORM's executor (one statement at a time, below).
 */
export interface PostgresTransport {
  /** Creates the tables once (a failure is retried by the next call). */
  ready(): Promise<void>;
  /** One statement committed on its own; a `name` prepares it where the driver can. */
  send(statement: LedgerStatement): Promise<TransportRows>;
  /** `fn` in one transaction of its own (the partitions' DDL), committed synchronously. */
  transact<T>(fn: (query: TransportQuery) => Promise<T>): Promise<T>;
  /** The claim of one entry (postgres-claim.ts): the committed row holding the key, or undefined when it went in. */
  claim(entry: InFlightEntry): Promise<LedgerRow | undefined>;
}

/** A statement of the ledger's: named (prepared) or text alone. */
export interface LedgerStatement {
  readonly name?: string;
  readonly text: string;
  readonly values: unknown[];
}

/** Rows and a count, whatever the driver (an executor's ExecutorRows, the pg store's rows). */
interface TransportRows {
  readonly rows: unknown[];
  readonly rowCount: number;
}

type TransportQuery = (text: string, values?: unknown[]) => Promise<TransportRows>;

/** The PostgreSQL ledger, and the partitions its caller's own writes go into. */
export interface PostgresLedger {
  readonly ledger: Omit<ExecutorLedger, 'complete' | 'commitDeferred' | 'placeRow'>;
  /** Runs a write of a row first seen at a time in that time's partition, made if missing. */
  readonly placed: ReturnType<typeof placedInPartition>;
  readonly receipts: ReturnType<typeof postgresReceiptPartitions>;
}

/**
 * The PostgreSQL ledger, once for every transport: the tables (receipts partitioned by first
 * sighting, tombstones beside them, the claim function) and the statements
 * (postgres-statements.ts). What ends the effect's transaction with its receipt is the caller's
 * (`complete`): the pg store sends COMMIT or ROLLBACK itself, an ORM commits its callback.
 */
export function postgresLedger(
  transport: PostgresTransport,
  statements: ReturnType<typeof postgresStatements>,
  o: Pick<ExecutorLedgerOptions, 'tables' | 'receiptPartitionMs' | 'tombstonePartitionMs'>,
): PostgresLedger {
  const { tables } = o;
  const { ready } = transport;
  const query: TransportQuery = (text, values = []) => transport.send({ text, values });
  const named = (use: Parameters<typeof statements.named>[0], values: unknown[]) =>
    transport.send(statements.named(use, values));
  const tombstones = postgresTombstoneWrites(tables, ASYNC_COMMIT, query);
  const receipts = postgresReceiptPartitions(tables, o.receiptPartitionMs, query, (fn) =>
    transport.transact(fn),
  );
  const sweeper = postgresSweep(
    tables,
    o.tombstonePartitionMs,
    { ...receipts, partitionMs: o.receiptPartitionMs },
    query,
  );
  const placed = placedInPartition(ready, receipts);

  async function claim(entry: InFlightEntry): Promise<ClaimAttempt> {
    const found = await placed(entry.firstSeenAt, () => transport.claim(entry));
    return found === undefined ? { won: true } : { won: false, existing: rowToEntry(found) };
  }

  const ledger: PostgresLedger['ledger'] = {
    // A step copies tombstones (inserts) and drops whole partitions: it locks no row a request
    // needs, only the table for a moment when a partition goes (postgres-receipt-partitions.ts).
    tuning: { sweepBatchRows: 2000, sweepStepMs: DEFAULT_LEDGER_OPTIONS.sweepStepMs },
    ready,
    async get(scope, key) {
      await ready();
      const { rows } = await named('get', [scope, key]);
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },
    claim,
    async swap(expected, next) {
      // A key claimed again after its tombstone: a fresh live row (which wins over the
      // tombstone), claimed like a new key so that it stays unique.
      if (expected.state === 'expired') return (await claim(next as InFlightEntry)).won;
      if (next.state === 'expired') return tombstones.bury(expected, next);
      // A takeover after retention starts the key afresh: its row moves to the partition of now.
      const values = [...entryValues(next), ...versionParams(expected)];
      return placed(next.firstSeenAt, () => casWrite(() => named('swap', values)));
    },
    renew: (expected, leaseExpiresAt) =>
      casWrite(() => named('renew', [leaseExpiresAt, ...versionParams(expected)])),
    async remove(expected) {
      if (expected.state === 'expired') return tombstones.remove(expected);
      return casWrite(() => named('remove', versionParams(expected)));
    },
    async sweep(nowMs, tombstoneMs, limit = Infinity) {
      await ready();
      return sweeper.step(nowMs, tombstoneMs, limit);
    },
    async backlog(nowMs) {
      await ready();
      return sweeper.backlog(nowMs);
    },
    housekeep: async () => undefined,
  };
  return { ledger, placed, receipts };
}

/**
 * The PostgreSQL ledger on an ORM's executor: the ledger above, each statement sent as text
 * through the app's client. What the pg store adds on top of its driver (claims of concurrent
 * requests in one statement, prepared statements, pipelining, deferred groups) needs pg's own
 * client; an ORM's raw statements send one statement at a time.
 */
export function postgresExecutorLedger<Tx>(
  executor: SqlExecutor<Tx>,
  o: ExecutorLedgerOptions,
): ExecutorLedger {
  const { tables } = o;
  const statements = postgresStatements(tables, o.commitLevel);
  const transact = <T>(fn: (q: TransportQuery) => Promise<T>): Promise<T> =>
    executor.transaction((tx) => fn((text, values = []) => executor.queryIn(tx, text, values)));
  const claimSql = postgresSingleClaimFunction(tables).call;
  const receiptSql = postgresReceiptFunction(tables).call(o.commitLevel);
  const deferredSql = postgresDeferredFunction(tables).call(o.commitLevel);

  let setUp: Promise<void> | undefined;
  function ready(): Promise<void> {
    setUp ??= transact((q) => {
      // Text statements only: the set-up sends no named one.
      const client = { query: (text: string, values?: unknown[]) => q(text, values) };
      return setUpPostgresLedger(client as PgQueryable, tables, o.schema);
    }).catch((error: unknown) => {
      setUp = undefined;
      throw error;
    });
    return setUp;
  }

  const { ledger, receipts } = postgresLedger(
    {
      ready,
      send: ({ text, values }) => executor.query(text, values),
      transact,
      claim: async (entry) =>
        (await executor.query(claimSql, entryValues(entry))).rows[0] as LedgerRow | undefined,
    },
    statements,
    o,
  );
  return {
    ...ledger,
    // The receipt's function returns `completed` 1 or 0 (postgres-receipt-function.ts: planned
    // once per connection, where an unnamed UPDATE is planned at every call) and the statement
    // sets the commit's level; the ORM commits after it, or rolls back when the ledger throws on 0.
    async complete(tx, expected, next) {
      const values = [...entryValues(next), ...versionParams(expected)];
      const { rows } = await tx.query(receiptSql, values);
      return (rows[0] as { completed?: unknown } | undefined)?.completed === 1;
    },
    // The row under the key's advisory lock (postgres-deferred-function.ts), setting the commit's
    // level like the receipt. A first sighting with no partition yet fails the statement (and the
    // transaction): false, and the claimed way's claim makes the partition (placedInPartition).
    async placeRow(firstSeenAt) {
      await ready();
      await receipts.ensure([firstSeenAt]);
    },
    async commitDeferred(tx, entry) {
      try {
        const { rows } = await tx.query(deferredSql, entryValues(entry));
        return Number((rows[0] as { found?: unknown } | undefined)?.found) === 0;
      } catch (error) {
        if (sqlStateOf(error) === NO_PARTITION) return false;
        throw error;
      }
    },
  };
}

export const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

/**
 * A compare-and-swap: true when it changed the row. A row a concurrent takeover moved to another
 * partition is a serialization failure in PostgreSQL; here it means someone else wrote first.
 */
export async function casWrite(write: () => Promise<{ rowCount: number }>): Promise<boolean> {
  try {
    return (await write()).rowCount === 1;
  } catch (error) {
    if ((error as { code?: string }).code === '40001') return false;
    throw error;
  }
}

/** The SQLSTATE of `error` or of an error it wraps (an ORM's wrapper around the driver's). */
function sqlStateOf(error: unknown): string | undefined {
  for (const e of causes(error)) {
    const code = (e as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
