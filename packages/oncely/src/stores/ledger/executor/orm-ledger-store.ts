import { InvalidOptionError, OncelyError } from '../../../contract/errors.js';
import { DURABILITIES, type Durability, type LedgerStore } from '../../../ledger/ledger-store.js';
import { SQL_DIALECTS, type CarriesSqlHandle } from '../../../ledger/sql-handle.js';
import { checkIdentifier } from '../ledger-row.js';
import {
  DEFAULT_POSTGRES_STORE_OPTIONS,
  LOWER_TO_ASYNCHRONOUS,
  RAISE_TO_SYNCHRONOUS,
} from '../postgres/postgres-store-options.js';
import { postgresLedgerTables } from '../postgres/postgres-tombstones.js';
import { StoreClosedError } from '../../store-errors.js';
import type { ExecutorLedger, ExecutorLedgerOptions } from './executor-ledger.js';
import { executorSql } from './executor-sql.js';
import { ormCommitAlone } from './orm-commit-alone.js';
import { ormDeferredCommit } from './orm-deferred-commit.js';
import { OrmTransaction } from './orm-transaction.js';
import { postgresExecutorLedger } from './postgres-executor-ledger.js';
import type { SqlExecutor } from '../../orm/sql-executor.js';
import { sqliteExecutorLedger } from './sqlite-executor-ledger.js';

export interface OrmLedgerStoreOptions<Tx> {
  /** How statements reach the database: `kyselyExecutor(db, …)`, `knexExecutor(knex)`, `drizzlePgExecutor(db)`, `prismaExecutor(prisma, …)`, `typeormExecutor(dataSource)`, … */
  readonly executor: SqlExecutor<Tx>;
  /** The ledger's table, created if missing (the same tables the built-in store makes). @default 'oncely_ledger' */
  readonly table?: string;
  /** PostgreSQL: the table's schema, created if missing. @default undefined (the search_path) */
  readonly schema?: string | undefined;
  /**
   * PostgreSQL: 'durable' commits the effect and its receipt synchronously; 'process' without
   * waiting for the WAL flush (docs/durability.md). SQLite: what the app's connection was opened
   * with (its `synchronous` pragma), declared here. @default 'durable'
   */
  readonly durability?: Durability;
  /** PostgreSQL: the span of one receipt partition (as createPostgresStore). @default 21600000 */
  readonly receiptPartitionMs?: number;
  /** PostgreSQL: the span of one tombstone partition. @default 86400000 */
  readonly tombstonePartitionMs?: number;
}

/**
 * A LedgerStore on an executor; `Tx` is the ORM's own transaction object, given to the route. It
 * also carries its SQL handle, so that `journal.recordWithin(tx, intent)` takes it as it is.
 */
export interface OrmLedgerStore<Tx> extends LedgerStore<Tx & CarriesSqlHandle> {
  readonly executor: SqlExecutor<Tx>;
}

/**
 * The ledger on the app's ORM: the effect's writes, made with the ORM's own transaction object
 * (`context.tx`, typed as the ORM types it), commit with the receipt, and the ledger's own
 * statements go through the same ORM (no second pool). One store for every executor: the SQL is
 * the database's (postgres-executor-ledger.ts, sqlite-executor-ledger.ts); the executor says how
 * it reaches the database (sql-executor.ts).
 */
export function createOrmLedgerStore<Tx>(options: OrmLedgerStoreOptions<Tx>): OrmLedgerStore<Tx> {
  const executor = checkExecutor(options?.executor);
  const o = resolveOptions(options);
  const ledger: ExecutorLedger =
    executor.dialect === 'postgres'
      ? postgresExecutorLedger(executor, o)
      : sqliteExecutorLedger(executor, o);
  const transactions = new WeakMap<object, OrmTransaction<Tx>>();
  let closed = false;

  /** The transaction behind a handle this store gave; anything else is refused. */
  function ours(tx: Tx & CarriesSqlHandle): OrmTransaction<Tx> {
    const found = transactions.get(tx as object);
    if (found !== undefined) return found;
    throw new OncelyError(
      'foreign_transaction',
      `${executor.name}: not a transaction handle of this ledger store (use the context's tx)`,
    );
  }
  const open = <T>(fn: () => Promise<T>): Promise<T> =>
    closed ? Promise.reject(new StoreClosedError(executor.name)) : fn();
  const sql = (tx: Tx & CarriesSqlHandle) => executorSql(executor.dialect, ours(tx));

  async function transaction<T>(fn: (tx: Tx & CarriesSqlHandle) => Promise<T>): Promise<T> {
    await open(() => ledger.ready());
    const transaction = new OrmTransaction(executor);
    transactions.set(transaction.handle as object, transaction);
    let result;
    try {
      // The handle answers SQL_HANDLE (orm-transaction.ts).
      result = await fn(transaction.handle as Tx & CarriesSqlHandle);
    } catch (error) {
      await transaction.settle({ ok: false, error });
      throw error;
    }
    await transaction.settle({ ok: true });
    return result;
  }

  return {
    name: `${executor.name}-${executor.dialect}`,
    executor,
    durability: o.durability,
    capabilities: {
      // A route with writes: 'deferred' runs in the ORM's transaction, with no claim committed
      // before it; the key's row ends the transaction (orm-deferred-commit.ts).
      deferredCommit: ormDeferredCommit(
        transaction,
        sql,
        (tx, entry) => ledger.commitDeferred(ours(tx), entry),
        (firstSeenAt) => open(() => ledger.placeRow(firstSeenAt)),
      ),
      // A lone statement (a step's record) through the executor's own query: orm-commit-alone.ts.
      commitAlone: ormCommitAlone(executor, o.commitLevel),
      // SQLite: the app's one connection is held by a begun transaction until its receipt, so a
      // step committed on its own after the route's statements would wait forever: refused.
      holdsWriter:
        executor.dialect === 'sqlite'
          ? (tx) => transactions.get(tx as object)?.begun === true
          : undefined,
    },
    tuning: ledger.tuning,
    ready: () => open(() => ledger.ready()),
    get: (scope, key) => open(() => ledger.get(scope, key)),
    claim: (entry) => open(() => ledger.claim(entry)),
    swap: (expected, next) => open(() => ledger.swap(expected, next)),
    renew: (expected, leaseExpiresAt) => open(() => ledger.renew(expected, leaseExpiresAt)),
    remove: (expected) => open(() => ledger.remove(expected)),
    sweep: (nowMs, tombstoneMs, limit) => open(() => ledger.sweep(nowMs, tombstoneMs, limit)),
    backlog: (nowMs) => open(() => ledger.backlog(nowMs)),
    housekeep: () => ledger.housekeep(),

    transaction,

    complete: (tx, expected, next) => ledger.complete(ours(tx), expected, next),
    sql,
    isUnavailable: (error) => executor.isUnavailable(error),
    async close() {
      closed = true;
      await executor.close?.();
    },
  };
}

function checkExecutor<Tx>(executor: SqlExecutor<Tx> | undefined): SqlExecutor<Tx> {
  const ok =
    typeof executor === 'object' &&
    executor !== null &&
    SQL_DIALECTS.includes(executor.dialect) &&
    typeof executor.query === 'function' &&
    typeof executor.queryIn === 'function' &&
    typeof executor.transaction === 'function';
  if (!ok)
    throw new InvalidOptionError(
      'executor',
      executor,
      'an executor: kyselyExecutor(db, { dialect }), knexExecutor(knex), drizzlePgExecutor(db), drizzleSqliteExecutor(db), prismaExecutor(prisma, { dialect }) or typeormExecutor(dataSource)',
    );
  return executor as SqlExecutor<Tx>;
}

function resolveOptions<Tx>(
  options: OrmLedgerStoreOptions<Tx>,
): ExecutorLedgerOptions & { durability: Durability } {
  const table = checkIdentifier('table', options.table ?? DEFAULT_POSTGRES_STORE_OPTIONS.table);
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  if (schema !== undefined && options.executor.dialect === 'sqlite')
    throw new InvalidOptionError('schema', schema, 'undefined on SQLite (a file has no schemas)');
  const durability = options.durability ?? DEFAULT_POSTGRES_STORE_OPTIONS.durability;
  if (!DURABILITIES.includes(durability))
    throw new InvalidOptionError('durability', durability, DURABILITIES.join(' or '));
  const span = (name: 'receiptPartitionMs' | 'tombstonePartitionMs'): number => {
    const ms = options[name] ?? DEFAULT_POSTGRES_STORE_OPTIONS[name];
    if (!Number.isSafeInteger(ms) || ms < 1000)
      throw new InvalidOptionError(name, ms, 'a whole number of milliseconds >= 1000');
    return ms;
  };
  return {
    table,
    schema,
    tables: postgresLedgerTables(schema, table),
    commitLevel: durability === 'durable' ? RAISE_TO_SYNCHRONOUS : LOWER_TO_ASYNCHRONOUS,
    receiptPartitionMs: span('receiptPartitionMs'),
    tombstonePartitionMs: span('tombstonePartitionMs'),
    durability,
  };
}
