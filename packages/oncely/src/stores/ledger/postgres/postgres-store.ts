import { OncelyError } from '../../../contract/errors.js';
import { DEFAULT_LEDGER_OPTIONS } from '../../../ledger/ledger-options.js';
import type { EntryVersion, InFlightEntry } from '../../../ledger/ledger-entry.js';
import type { ClaimAttempt } from '../../../ledger/ledger-store.js';
import { entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import type { PgTx } from '../../postgres-driver/pg-pool.js';
import { columnArrays } from './postgres-claim.js';
import { claimBatcher, type ClaimFound } from './postgres-claim-batch.js';
import { postgresConnection, type PostgresConnection } from './postgres-connection.js';
import { postgresDeferredCommit } from './postgres-deferred.js';
import { deferredGroups } from './postgres-deferred-groups.js';
import { placedInPartition, postgresReceiptPartitions } from './postgres-receipt-partitions.js';
import { postgresSql } from '../../postgres-driver/postgres-sql.js';
import { ASYNC_COMMIT, postgresStatements } from './postgres-statements.js';
import {
  resolvePostgresStoreOptions,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store-options.js';
import { postgresSweep } from './postgres-sweep.js';
import { PostgresTransaction } from './postgres-transaction.js';
import { postgresTombstoneWrites } from './postgres-tombstones.js';

export {
  DEFAULT_POSTGRES_STORE_OPTIONS,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store-options.js';
import { isPostgresUnavailable } from '../../postgres-driver/postgres-unavailable.js';

/**
 * The ledger on PostgreSQL through a `pg` Pool, on pg's public API only, every statement through
 * one transport (send-statements.ts):
 * - a claim is one statement that inserts the in-flight row or returns the committed one (a
 *   PL/pgSQL function, postgres-claim.ts), committed on its own and asynchronously, so every
 *   worker in every process sees the key at once and a new key costs one round trip; the claims
 *   of concurrent requests share that statement (postgres-claim-batch.ts);
 * - the effect's transaction begins at its first statement (or at the receipt), not before: an
 *   effect that first awaits something else holds no pooled connection meanwhile;
 * - the receipt is a compare-and-swap on the owner token in the effect's transaction; its
 *   returned row says whether it matched, and the transaction then commits (synchronously in
 *   durable mode: the WAL flush of that COMMIT also makes the claim before it durable, one flush
 *   per request) or rolls back.
 * Why the asynchronous claim is safe: docs/durability.md.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const o = resolvePostgresStoreOptions(options);
  const { tables, commitLevel } = o;
  const connection = postgresConnection(o);
  const { query } = connection;
  const statements = postgresStatements(tables, commitLevel);
  const raw = (text: string, values: unknown[] = []) => query(text, values);
  const tombstones = postgresTombstoneWrites(tables, ASYNC_COMMIT, raw);
  const receipts = postgresReceiptPartitions(tables, o.receiptPartitionMs, raw, (fn) =>
    connection.transact(fn),
  );
  const sweeper = postgresSweep(
    tables,
    o.tombstonePartitionMs,
    { ...receipts, partitionMs: o.receiptPartitionMs },
    raw,
  );
  const deferredCommit = postgresDeferredCommit(tables, commitLevel, statements.nameOf);
  const deferred = deferredGroups(
    (members) => deferredCommit(connection.pool(), members),
    o.deferredGroups,
  );

  const placed = placedInPartition(() => connection.setUp(), receipts);

  /** Claims of concurrent requests go together, one statement for all (postgres-claim-batch.ts). */
  const claims = claimBatcher((entries) => sendClaims(query, statements, entries));

  async function claim(entry: InFlightEntry): Promise<ClaimAttempt> {
    const found = await placed(entry.firstSeenAt, () => claims.claim(entry));
    return found === undefined ? { won: true } : { won: false, existing: rowToEntry(found) };
  }

  return {
    name: 'postgres',
    isUnavailable: isPostgresUnavailable,
    table: tables.live,
    tombstoneTable: tables.tombstones,
    durability: o.durability,
    capabilities: {
      // A deferred effect's receipt and writes: one transaction (postgres-deferred.ts), shared
      // with the deferred commits of concurrent requests (postgres-deferred-groups.ts).
      deferredCommit: (entry, writes) =>
        placed(entry.firstSeenAt, () => deferred.commit({ entry, writes })),
    },
    // A step copies tombstones (inserts) and drops whole partitions: it locks no row a request
    // needs, only the table for a moment when a partition goes (postgres-receipt-partitions.ts).
    tuning: { sweepBatchRows: 2000, sweepStepMs: DEFAULT_LEDGER_OPTIONS.sweepStepMs },
    // Connects and creates the table: a bad URL or an unreachable server fails here.
    ready: () => connection.setUp(),
    sql: postgresSql,
    housekeep: async () => undefined,

    async get(scope, key) {
      const { rows } = await query(statements.named('get', [scope, key]));
      return rows[0] === undefined ? undefined : rowToEntry(rows[0] as LedgerRow);
    },

    claim,

    async swap(expected, next) {
      // A key claimed again after its tombstone: a fresh live row (which wins over the tombstone),
      // claimed like a new key so that it stays unique.
      if (expected.state === 'expired') return (await claim(next as InFlightEntry)).won;
      if (next.state === 'expired') return tombstones.bury(expected, next);
      // A takeover after retention starts the key afresh: its row moves to the partition of now.
      const values = [...entryValues(next), ...versionParams(expected)];
      return placed(next.firstSeenAt, () =>
        casWrite(() => query(statements.named('swap', values))),
      );
    },

    renew: (expected, leaseExpiresAt) =>
      casWrite(() =>
        query(statements.named('renew', [leaseExpiresAt, ...versionParams(expected)])),
      ),

    async remove(expected) {
      if (expected.state === 'expired') return tombstones.remove(expected);
      return casWrite(() => query(statements.named('remove', versionParams(expected))));
    },

    async preparePartitions(fromMs, toMs) {
      await connection.setUp();
      const instants = [];
      for (let t = fromMs; t < toMs; t += o.receiptPartitionMs) instants.push(t);
      await receipts.ensure([...instants, toMs - 1]);
    },

    async transaction(fn) {
      await connection.setUp();
      return PostgresTransaction.run(connection.pool(), commitLevel, fn);
    },

    async complete(tx: PgTx, expected, next) {
      const receipt = statements.named('receipt', [
        ...entryValues(next),
        ...versionParams(expected),
      ]);
      // The receipt, then COMMIT or ROLLBACK as it says: the transaction's last statement.
      const transaction = ownTransaction(tx);
      return casWrite(async () => ({ rowCount: (await transaction.finishWith(receipt)) ? 1 : 0 }));
    },

    async sweep(nowMs, tombstoneMs, limit = Infinity) {
      await connection.setUp();
      return sweeper.step(nowMs, tombstoneMs, limit);
    },

    async backlog(nowMs) {
      await connection.setUp();
      return sweeper.backlog(nowMs);
    },

    close: () => connection.close(),
  };
}

/**
 * Runs a write that puts a row first seen at `firstSeenAt` in its partition. Should the row find
 * none (another process dropped a partition this one still knew of: a clock far behind), the
 * partitions are read again and the write tried once more.
 */

/** One claim statement for `entries`: each entry's row found, or undefined where it went in. */
async function sendClaims(
  query: PostgresConnection['query'],
  statements: ReturnType<typeof postgresStatements>,
  entries: readonly InFlightEntry[],
): Promise<ClaimFound[]> {
  const { rows: found } = await query(statements.named('claims', columnArrays(entries)));
  const answers: ClaimFound[] = entries.map(() => undefined);
  for (const row of found as Array<LedgerRow & { i: number }>) answers[row.i - 1] = row;
  return answers;
}

/** The transaction behind a handle the store gave (its `transaction`); anything else is refused. */
function ownTransaction(tx: PgTx): PostgresTransaction {
  if (tx instanceof PostgresTransaction) return tx;
  throw new OncelyError(
    'foreign_transaction',
    'postgres: not a transaction handle of a ledger store (use the tx the store gave)',
  );
}

const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

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
