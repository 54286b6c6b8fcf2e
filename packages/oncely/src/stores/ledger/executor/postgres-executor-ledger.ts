import { DEFAULT_LEDGER_OPTIONS } from '../../../ledger/ledger-options.js';
import type { EntryVersion, InFlightEntry } from '../../../ledger/ledger-entry.js';
import { LEDGER_COLUMNS, entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { postgresClaimFunction } from '../postgres/postgres-claim.js';
import { LEDGER_COLUMN_TYPES } from '../postgres/postgres-ledger-columns.js';
import type { PgQueryable } from '../../postgres-driver/pg-pool.js';
import { setUpPostgresLedger } from '../postgres/postgres-ledger-schema.js';
import {
  placedInPartition,
  postgresReceiptPartitions,
} from '../postgres/postgres-receipt-partitions.js';
import { ASYNC_COMMIT, postgresStatements } from '../postgres/postgres-statements.js';
import { postgresSweep } from '../postgres/postgres-sweep.js';
import { postgresTombstoneWrites } from '../postgres/postgres-tombstones.js';
import type { ExecutorLedger, ExecutorLedgerOptions } from './executor-ledger.js';
import type { ExecutorRows, SqlExecutor } from '../../orm/sql-executor.js';

/**
 * The PostgreSQL ledger on an executor: the very tables and statements of the pg store
 * (postgres-store.ts; receipts partitioned by first sighting, tombstones beside them, the claim
 * function), sent through the app's ORM. What the pg store adds on top of its driver (claims of
 * concurrent requests in one statement, prepared statements, pipelining, deferred groups) needs
 * pg's own client; an ORM's raw statements send one statement at a time.
 */
export function postgresExecutorLedger<Tx>(
  executor: SqlExecutor<Tx>,
  o: ExecutorLedgerOptions,
): ExecutorLedger {
  const { tables } = o;
  const statements = postgresStatements(tables, o.commitLevel);
  const query = (text: string, values: readonly unknown[] = []): Promise<ExecutorRows> =>
    executor.query(text, values);
  const transact = <T>(fn: (q: typeof query) => Promise<T>): Promise<T> =>
    executor.transaction((tx) => fn((text, values = []) => executor.queryIn(tx, text, values)));
  const named = (use: Parameters<typeof statements.named>[0], values: unknown[]) => {
    const { text } = statements.named(use, values);
    return query(text, values);
  };
  const tombstones = postgresTombstoneWrites(tables, ASYNC_COMMIT, query);
  const receipts = postgresReceiptPartitions(tables, o.receiptPartitionMs, query, transact);
  const sweeper = postgresSweep(
    tables,
    o.tombstonePartitionMs,
    { ...receipts, partitionMs: o.receiptPartitionMs },
    query,
  );
  const claimSql = singleClaim(postgresClaimFunction(tables).name);

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

  const placed = placedInPartition(ready, receipts);

  async function claim(entry: InFlightEntry) {
    const { rows } = await placed(entry.firstSeenAt, () => query(claimSql, entryValues(entry)));
    const found = rows[0] as LedgerRow | undefined;
    return found === undefined
      ? { won: true as const }
      : { won: false as const, existing: rowToEntry(found) };
  }

  return {
    tuning: { sweepBatchRows: 2000, sweepStepMs: DEFAULT_LEDGER_OPTIONS.sweepStepMs },
    ready,
    async get(scope, key) {
      await ready();
      const { rows } = await named('get', [scope, key]);
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },
    claim,
    async swap(expected, next) {
      if (expected.state === 'expired') return (await claim(next as InFlightEntry)).won;
      if (next.state === 'expired') return tombstones.bury(expected, next);
      const values = [...entryValues(next), ...versionParams(expected)];
      return placed(next.firstSeenAt, () => casWrite(() => named('swap', values)));
    },
    renew: (expected, leaseExpiresAt) =>
      casWrite(() => named('renew', [leaseExpiresAt, ...versionParams(expected)])),
    async remove(expected) {
      if (expected.state === 'expired') return tombstones.remove(expected);
      return casWrite(() => named('remove', versionParams(expected)));
    },
    // The receipt's statement returns `completed` 1 or 0 (postgres-statements.ts) and sets the
    // commit's level; the ORM commits after it, or rolls back when the ledger throws on 0.
    async complete(tx, expected, next) {
      const values = [...entryValues(next), ...versionParams(expected)];
      const { text } = statements.named('receipt', values);
      const { rows } = await tx.query(text, values);
      return (rows[0] as { completed?: unknown } | undefined)?.completed === 1;
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
}

/**
 * The claim function (postgres-claim.ts) called for one entry with scalar parameters made into
 * one-element arrays in the statement: an ORM's raw statement may not pass a JS array as one
 * value (Knex expands it into a list).
 */
function singleClaim(functionName: string): string {
  const args = LEDGER_COLUMNS.map((c, i) => `ARRAY[$${i + 1}::${LEDGER_COLUMN_TYPES[c]}]`);
  return `SELECT c.* FROM ${ASYNC_COMMIT} CROSS JOIN LATERAL ${functionName}(${args.join(', ')}) AS c`;
}

const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

/**
 * A compare-and-swap: true when it changed the row. A row a concurrent takeover moved to another
 * partition is a serialization failure in PostgreSQL; here it means someone else wrote first.
 */
async function casWrite(write: () => Promise<ExecutorRows>): Promise<boolean> {
  try {
    return (await write()).rowCount === 1;
  } catch (error) {
    if ((error as { code?: string }).code === '40001') return false;
    throw error;
  }
}
