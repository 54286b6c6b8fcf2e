import { InvalidOptionError } from '../../contract/errors.js';
import type { SqlDialect } from '../../ledger/sql-handle.js';
import { peerLoader } from './load-peer.js';
import { cutAtPlaceholders } from './placeholders.js';
import type { ExecutorRows, SqlExecutor } from './sql-executor.js';
import { sqliteExclusive } from './sqlite-exclusive.js';
import { unavailableBy } from './unavailable-errors.js';

const drizzle = peerLoader('drizzle-orm', 'oncely/orm/drizzle', () => import('drizzle-orm'));

/** What the executor uses of a Drizzle database on node-postgres: `execute` and `transaction`. */
export interface DrizzlePgLike {
  execute(query: unknown): PromiseLike<unknown>;
  // `any`: Drizzle's own parameter type is its PgTransaction, which this slice does not name.
  transaction<T>(fn: (tx: any) => Promise<T>): Promise<T>;
}

/** What it uses of a Drizzle database on better-sqlite3: `all` and `run`. */
export interface DrizzleSqliteLike {
  all(query: unknown): unknown;
  run(query: unknown): unknown;
}

/** The transaction object a Drizzle database hands its `transaction` callback. */
export type DrizzleTransactionOf<D> = D extends {
  transaction<T>(fn: (tx: infer X) => Promise<T>, ...rest: never[]): Promise<T>;
}
  ? X
  : never;

/**
 * Drizzle on node-postgres as an executor: the ledger's statements run through `execute` on the
 * database or on the request's `tx` (`db.transaction(async (tx) => …)`).
 */
export function drizzlePgExecutor<D extends DrizzlePgLike>(
  db: D,
): SqlExecutor<DrizzleTransactionOf<D>> {
  if (typeof db?.execute !== 'function' || typeof db.transaction !== 'function')
    throw new InvalidOptionError('db', db, 'a Drizzle database on node-postgres');
  refuseTransaction(db);
  const run = async (on: DrizzlePgLike, sql: string, params: readonly unknown[]) => {
    const result = (await on.execute(await statement(sql, params, 'postgres'))) as {
      rows: Record<string, unknown>[];
      rowCount: number | null;
    };
    return { rows: result.rows, rowCount: result.rowCount ?? result.rows.length };
  };
  return {
    name: 'drizzle',
    dialect: 'postgres',
    capabilities: { concurrentTransactions: true, endingMethods: [] },
    query: (sql, params) => unwrapped(run(db, sql, params)),
    queryIn: (tx, sql, params) => unwrapped(run(tx as DrizzlePgLike, sql, params)),
    transaction: (fn) => db.transaction((tx) => fn(tx as DrizzleTransactionOf<D>)),
    isUnavailable: unavailableBy('postgres'),
    isTransaction: (value) => isDrizzleTransaction(value),
  };
}

/**
 * Drizzle on better-sqlite3 as an executor. Drizzle's better-sqlite3 transactions are
 * synchronous (a callback that awaits would commit at its first await), so the executor runs the
 * transaction itself: BEGIN IMMEDIATE, the route's statements on the database object, COMMIT or
 * ROLLBACK, with every statement of the ledger queued while it is open (sqlite-exclusive.ts).
 * The route's handle is the database object `db`, typed as it is.
 */
export function drizzleSqliteExecutor<D extends DrizzleSqliteLike>(db: D): SqlExecutor<D> {
  if (typeof db?.all !== 'function' || typeof db.run !== 'function')
    throw new InvalidOptionError('db', db, 'a Drizzle database on better-sqlite3');
  refuseTransaction(db);
  const send = async (sql: string, params: readonly unknown[]): Promise<ExecutorRows> => {
    const query = await statement(sql, params, 'sqlite');
    if (READER.test(sql)) {
      const rows = db.all(query) as Record<string, unknown>[];
      return { rows, rowCount: rows.length };
    }
    return { rows: [], rowCount: (db.run(query) as { changes: number }).changes };
  };
  const exclusive = sqliteExclusive(send);
  return {
    name: 'drizzle',
    dialect: 'sqlite',
    capabilities: { concurrentTransactions: false, endingMethods: [] },
    query: (sql, params) => unwrapped(exclusive.query(sql, params)),
    queryIn: (_tx, sql, params) => unwrapped(send(sql, params)),
    transaction: (fn) => exclusive.transaction(() => fn(db)),
    isUnavailable: unavailableBy('sqlite'),
    // Its transactions are synchronous, so the app cannot await inside one of its own; the
    // route's handle (the database object) is known by its SQL handle instead.
    isTransaction: () => false,
  };
}

/** Statements better-sqlite3 answers with rows (`all`); the others with a change count (`run`). */
const READER = /^\s*(SELECT|WITH|PRAGMA|VALUES)\b|\bRETURNING\b/i;

/** The statement as a Drizzle `sql` object: texts between placeholders, each value a parameter. */
async function statement(sql: string, params: readonly unknown[], dialect: SqlDialect) {
  const { sql: tag } = await drizzle();
  const { texts, values } = cutAtPlaceholders(sql, params, dialect);
  const chunks = texts.flatMap((text, i) =>
    i < values.length ? [tag.raw(text), tag.param(values[i])] : [tag.raw(text)],
  );
  return tag.join(chunks);
}

/** Drizzle wraps a driver's error in a DrizzleQueryError: the driver's (its code) is the one that says why. */
async function unwrapped<T>(sending: Promise<T>): Promise<T> {
  try {
    return await sending;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    if ((error as Error)?.name === 'DrizzleQueryError' && cause instanceof Error) throw cause;
    throw error;
  }
}

function isDrizzleTransaction(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { rollback?: unknown }).rollback === 'function' &&
    'nestedIndex' in value
  );
}

function refuseTransaction(db: object): void {
  if (isDrizzleTransaction(db))
    throw new InvalidOptionError(
      'db',
      'a Drizzle transaction',
      'the Drizzle database itself: the ledger begins one transaction per request',
    );
}
