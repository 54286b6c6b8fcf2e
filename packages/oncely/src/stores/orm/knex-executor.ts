import type { Knex } from 'knex';
import { InvalidOptionError } from '../../contract/errors.js';
import type { SqlDialect } from '../../ledger/sql-handle.js';
import { isPostgresUnavailable } from '../postgres-driver/postgres-unavailable.js';
import { isSqliteUnavailable } from '../sqlite-driver/sqlite-unavailable.js';
import { dollarToQuestion } from './placeholders.js';
import type { ExecutorRows, SqlExecutor } from './sql-executor.js';
import { unavailableBy } from './unavailable-errors.js';

/** Knex's clients by the database they speak to. */
const CLIENTS: Record<string, SqlDialect> = {
  pg: 'postgres',
  postgres: 'postgres',
  postgresql: 'postgres',
  'better-sqlite3': 'sqlite',
};

/**
 * Knex as an executor: the ledger's statements run as `raw` statements on the instance (outside a
 * request) or on the request's `Knex.Transaction` (`knex.transaction(fn)`). Knex binds `?` on
 * every client, so PostgreSQL's `$1 …` are rewritten. The transaction's `commit` and `rollback`
 * are refused on the route's handle: the ledger commits the effect with its receipt.
 */
export function knexExecutor(knex: Knex): SqlExecutor<Knex.Transaction> {
  if (typeof knex?.transaction !== 'function' || typeof knex.raw !== 'function')
    throw new InvalidOptionError('knex', knex, 'a Knex instance');
  if ((knex as { isTransaction?: boolean }).isTransaction === true)
    throw new InvalidOptionError(
      'knex',
      'a Knex transaction',
      'the Knex instance itself: the ledger begins one transaction per request',
    );
  const config = (knex.client as { config?: Knex.Config }).config ?? {};
  const client = typeof config.client === 'string' ? config.client : undefined;
  const dialect = client === undefined ? undefined : CLIENTS[client];
  if (dialect === undefined)
    throw new InvalidOptionError(
      'knex',
      client,
      `a Knex of client ${Object.keys(CLIENTS).join(', ')}`,
    );
  // A response hook that renames columns would hide the ledger's own from it.
  if (config.postProcessResponse !== undefined)
    throw new InvalidOptionError(
      'knex',
      'a Knex with postProcessResponse',
      'a Knex without postProcessResponse (the ledger reads its columns by name)',
    );
  async function run(on: Knex | Knex.Transaction, sql: string, params: readonly unknown[]) {
    const statement = dialect === 'postgres' ? dollarToQuestion(sql, params) : { sql, params };
    return rowsOf(await on.raw(statement.sql, statement.params as Knex.RawBinding[]));
  }
  return {
    name: 'knex',
    dialect,
    capabilities: {
      concurrentTransactions: dialect === 'postgres',
      endingMethods: ['commit', 'rollback'],
    },
    query: (sql, params) => run(knex, sql, params),
    queryIn: (tx, sql, params) => run(tx, sql, params),
    transaction: (fn) => knex.transaction((trx) => fn(trx)),
    // Knex's own: its pool found no connection in time (every one is held, or none can be made).
    isUnavailable: unavailableBy(dialect, knexUnavailable),
    // Open: Knex's own flag, and not yet committed or rolled back.
    isTransaction: (value) => {
      const trx = value as { isTransaction?: unknown; isCompleted?: () => boolean } | undefined;
      return trx?.isTransaction === true && trx.isCompleted?.() !== true;
    },
  };
}

/**
 * Knex's own signals: its pool found no connection in time (KnexTimeoutError), or the driver's
 * error under the statement's text, which Knex writes in front of the message ("insert into … -
 * Client has encountered a connection error"): the driver's message is read past it.
 */
function knexUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'KnexTimeoutError') return true;
  const at = error.message.lastIndexOf(' - ');
  if (at < 0) return false;
  const driver = Object.assign(new Error(error.message.slice(at + 3)), {
    code: (error as { code?: unknown }).code,
  });
  return isPostgresUnavailable(driver) || isSqliteUnavailable(driver);
}

/** A raw statement's answer, per client: pg's result, or better-sqlite3's rows or run info. */
function rowsOf(result: unknown): ExecutorRows {
  if (Array.isArray(result)) return { rows: result, rowCount: result.length };
  const r = result as {
    rows?: Record<string, unknown>[];
    rowCount?: number | null;
    changes?: number;
  };
  if (Array.isArray(r.rows)) return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length };
  return { rows: [], rowCount: r.changes ?? 0 };
}
