import { OncelyError } from '../../../contract/errors.js';
import type { InFlightEntry } from '../../../ledger/ledger-entry.js';
import { entryValues, type LedgerRow } from '../ledger-row.js';
import type { PgQueryConfig, PgTx } from '../../postgres-driver/pg-pool.js';
import { casWrite, postgresLedger, versionParams } from '../executor/postgres-executor-ledger.js';
import { columnArrays } from './postgres-claim.js';
import { claimBatcher, type ClaimFound } from './postgres-claim-batch.js';
import { postgresConnection, type PostgresConnection } from './postgres-connection.js';
import { postgresDeferredCommit } from './postgres-deferred.js';
import { deferredGroups } from './postgres-deferred-groups.js';
import { postgresCommitAlone, postgresSql } from '../../postgres-driver/postgres-sql.js';
import { postgresStatements } from './postgres-statements.js';
import {
  resolvePostgresStoreOptions,
  type PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store-options.js';
import { PostgresTransaction } from './postgres-transaction.js';

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
  /** Claims of concurrent requests go together, one statement for all (postgres-claim-batch.ts). */
  const claims = claimBatcher((entries) => sendClaims(query, statements, entries));
  // The ledger's SQL, the same as on an ORM's executor (postgres-executor-ledger.ts), sent
  // through this store's pool: prepared statements, the claims batched.
  const { ledger, placed, receipts } = postgresLedger(
    {
      ready: () => connection.setUp(),
      send: (statement) =>
        statement.name === undefined
          ? query(statement.text, statement.values)
          : query(statement as PgQueryConfig),
      transact: (fn) => connection.transact(fn),
      claim: (entry) => claims.claim(entry),
    },
    statements,
    o,
  );
  const deferredCommit = postgresDeferredCommit(tables, commitLevel, statements.nameOf);
  const deferred = deferredGroups(
    (members) => deferredCommit(connection.pool(), members),
    o.deferredGroups,
  );

  return {
    ...ledger,
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
      commitAlone: postgresCommitAlone(query, commitLevel),
    },
    sql: postgresSql,

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

    close: () => connection.close(),
  };
}

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
