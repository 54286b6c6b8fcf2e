import type { Kysely, Transaction } from 'kysely';
import { InvalidOptionError } from '../../contract/errors.js';
import { SQL_DIALECTS, type SqlDialect } from '../../ledger/sql-handle.js';
import { peerLoader } from './load-peer.js';
import type { ExecutorRows, SqlExecutor } from './sql-executor.js';
import { unavailableBy } from './unavailable-errors.js';

export interface KyselyExecutorOptions {
  /** The database behind the Kysely instance: PostgresDialect or SqliteDialect. */
  readonly dialect: SqlDialect;
}

const kysely = peerLoader('kysely', 'oncely/orm/kysely', () => import('kysely'));

/**
 * Kysely as an executor: the ledger's statements run as raw compiled queries on `db` (outside a
 * request) or on the request's `Transaction<DB>` (`db.transaction().execute(fn)`), without the
 * instance's plugins (a CamelCasePlugin would rename the ledger's columns in its results).
 */
export function kyselyExecutor<DB>(
  db: Kysely<DB>,
  options: KyselyExecutorOptions,
): SqlExecutor<Transaction<DB>> {
  if (typeof db?.transaction !== 'function' || typeof db.executeQuery !== 'function')
    throw new InvalidOptionError('db', db, 'a Kysely instance');
  if (db.isTransaction)
    throw new InvalidOptionError(
      'db',
      'a Kysely Transaction',
      'the Kysely instance itself: the ledger begins one transaction per request',
    );
  const dialect = options?.dialect;
  if (!SQL_DIALECTS.includes(dialect))
    throw new InvalidOptionError('dialect', dialect, SQL_DIALECTS.join(' or '));
  const plain = db.withoutPlugins();
  async function run(on: Kysely<DB>, sql: string, params: readonly unknown[]) {
    const { CompiledQuery } = await kysely();
    const result = await on.executeQuery(CompiledQuery.raw(sql, [...params]));
    const rows = result.rows as Record<string, unknown>[];
    const affected = result.numAffectedRows;
    return { rows, rowCount: affected === undefined ? rows.length : Number(affected) };
  }
  return {
    name: 'kysely',
    dialect,
    capabilities: { concurrentTransactions: dialect === 'postgres', endingMethods: [] },
    query: (sql, params): Promise<ExecutorRows> => run(plain, sql, params),
    queryIn: (tx, sql, params) => run(tx.withoutPlugins(), sql, params),
    transaction: (fn) => db.transaction().execute(fn),
    isUnavailable: unavailableBy(dialect),
    isTransaction: (value) => (value as { isTransaction?: unknown })?.isTransaction === true,
  };
}
