import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { InvalidOptionError } from '../../contract/errors.js';
import type { SqlDialect } from '../../ledger/sql-handle.js';
import { AsyncMutex } from '../async-mutex.js';
import type { ExecutorRows, SqlExecutor } from './sql-executor.js';
import { unavailableBy } from './unavailable-errors.js';

/** TypeORM's drivers by the database they speak to. */
const DRIVERS: Record<string, SqlDialect> = { postgres: 'postgres', 'better-sqlite3': 'sqlite' };

/**
 * TypeORM as an executor: the ledger's statements run through a query runner of the DataSource
 * (outside a request) or the request's transactional EntityManager
 * (`dataSource.transaction(async (manager) => …)`), each asking TypeORM for its structured result
 * (rows and the count of rows changed). The route's handle is that EntityManager.
 *
 * On better-sqlite3, TypeORM has one connection and one query runner for the whole DataSource: a
 * second transaction begun while one is open would nest in it as a savepoint, and a statement
 * sent meanwhile would land in it. So the executor gives the connection to one transaction at a
 * time, and the ledger's other statements wait for their turn (as Knex's pool of one does).
 */
export function typeormExecutor(dataSource: DataSource): SqlExecutor<EntityManager> {
  if (
    typeof dataSource?.transaction !== 'function' ||
    typeof dataSource.createQueryRunner !== 'function'
  )
    throw new InvalidOptionError('dataSource', dataSource, 'a TypeORM DataSource');
  if (!dataSource.isInitialized)
    throw new InvalidOptionError(
      'dataSource',
      'a DataSource not initialized',
      'an initialized DataSource (await dataSource.initialize() first)',
    );
  const type = String(dataSource.options.type);
  const dialect = DRIVERS[type];
  if (dialect === undefined)
    throw new InvalidOptionError(
      'dataSource',
      `a DataSource of type ${type}`,
      `a DataSource of type ${Object.keys(DRIVERS).join(' or ')}`,
    );
  const mutex = dialect === 'sqlite' ? new AsyncMutex() : undefined;
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => (mutex ? mutex.run(fn) : fn());
  async function alone(sql: string, params: readonly unknown[]): Promise<ExecutorRows> {
    const runner = dataSource.createQueryRunner();
    try {
      return await run(runner, sql, params);
    } finally {
      await runner.release();
    }
  }
  return {
    name: 'typeorm',
    dialect,
    capabilities: { concurrentTransactions: dialect === 'postgres', endingMethods: [] },
    query: (sql, params) => inTurn(() => alone(sql, params)),
    queryIn: (manager, sql, params) => run(runnerOf(manager), sql, params),
    transaction: (fn) => inTurn(() => dataSource.transaction((manager) => fn(manager))),
    isUnavailable: unavailableBy(dialect, (error) => typeormUnavailable(dialect, error)),
    // A transactional EntityManager: its query runner is in a transaction not yet ended.
    isTransaction: (value) => {
      const runner = (value as { queryRunner?: QueryRunner } | undefined)?.queryRunner;
      return runner?.isTransactionActive === true && runner.isReleased !== true;
    },
  };
}

function runnerOf(manager: EntityManager): QueryRunner {
  const runner = manager.queryRunner;
  if (runner === undefined)
    throw new InvalidOptionError(
      'manager',
      'an EntityManager outside a transaction',
      "the transaction's EntityManager",
    );
  return runner;
}

/** One statement on a query runner; TypeORM's structured result: its rows, the rows it changed. */
async function run(
  runner: QueryRunner,
  sql: string,
  params: readonly unknown[],
): Promise<ExecutorRows> {
  const result = await runner.query(sql, [...params], true);
  const rows = Array.isArray(result.records) ? (result.records as Record<string, unknown>[]) : [];
  return { rows, rowCount: result.affected ?? rows.length };
}

/**
 * TypeORM's own signals: the driver's error under a QueryFailedError (`driverError`), and a query
 * runner TypeORM released because its connection emitted 'error' (the server ended it): the
 * route's next statement then fails with QueryRunnerAlreadyReleasedError.
 */
function typeormUnavailable(dialect: SqlDialect, error: unknown): boolean {
  if ((error as Error | undefined)?.name === 'QueryRunnerAlreadyReleasedError') return true;
  const driverError = (error as { driverError?: unknown } | undefined)?.driverError;
  return driverError !== undefined && driverError !== error && unavailableBy(dialect)(driverError);
}
