import { OncelyError } from '../contract/errors.js';

export const SQL_DIALECTS = ['sqlite', 'postgres'] as const;
export type SqlDialect = (typeof SQL_DIALECTS)[number];

/** What `run` tells about a write. */
export interface SqlRunResult {
  /** Rows inserted, updated or deleted (with RETURNING: rows returned). */
  readonly rowCount: number;
  /**
   * The first column of the first row a `RETURNING` clause gave back (`INSERT ... RETURNING id`),
   * on both dialects; undefined without RETURNING. Never SQLite's implicit rowid: PostgreSQL has
   * none, and a handler that relied on it would break there.
   */
  readonly insertedId: unknown;
}

/**
 * One SQL handle, the same on SQLite and PostgreSQL, over the ledger's own transaction: a
 * handler written once against it runs on both stores, and its writes commit with the receipt.
 *
 * - Placeholders are PostgreSQL's `$1, $2 …` on both dialects; one may repeat or come out of order.
 * - Values: strings, numbers, bigints, null, Uint8Array, and booleans, sent as 1/0 on both
 *   (SQLite has no boolean; PostgreSQL reads '1' as true for a BOOLEAN column too).
 * - Results are the driver's own: PostgreSQL gives BIGINT and `count(*)` as strings; write
 *   `CAST(count(*) AS INTEGER)` (valid on both) to get a number everywhere.
 * - Valid only while its transaction runs; afterwards every call rejects.
 */
export interface SqlHandle {
  readonly dialect: SqlDialect;
  /** INSERT/UPDATE/DELETE/DDL: the row count and, with RETURNING, the inserted id. */
  run(sql: string, params?: readonly unknown[]): Promise<SqlRunResult>;
  /** The first row, or undefined. */
  get<R = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<R | undefined>;
  /** Every row of a SELECT (or of a statement with RETURNING). */
  all<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * The key under which a store's transaction object carries its SQL handle: the route's ORM
 * transaction (oncely/orm) answers it, so `journal.recordWithin(tx, intent)` writes the intent
 * in that very transaction, as it does given `context.sql`.
 */
export const SQL_HANDLE: unique symbol = Symbol.for('oncely.sqlHandle');

/**
 * A transaction object that carries its SQL handle ({@link SQL_HANDLE}): the route's ORM
 * transaction (`context.tx` on an oncely/orm store) is typed as the ORM's own transaction and
 * this, so the SQL journal stores' `recordWithin(tx, intent)` take it as it is, and refuse, in
 * types too, the ORM's base client.
 */
export interface CarriesSqlHandle {
  readonly [SQL_HANDLE]: SqlHandle;
}

/** The SQL handle a transaction object carries ({@link SQL_HANDLE}), or undefined. */
export function sqlHandleOf(tx: unknown): SqlHandle | undefined {
  if ((typeof tx !== 'object' && typeof tx !== 'function') || tx === null) return undefined;
  return (tx as { [SQL_HANDLE]?: SqlHandle })[SQL_HANDLE];
}

/** True when a statement gives rows back besides changing them: `... RETURNING cols`. */
export function hasReturning(sql: string): boolean {
  return /\breturning\b/i.test(sql);
}

/** What `run` answers from the rows a RETURNING statement gave back. */
export function returnedResult(rows: readonly Record<string, unknown>[]): SqlRunResult {
  const first = rows[0];
  return {
    rowCount: rows.length,
    insertedId: first === undefined ? undefined : Object.values(first)[0],
  };
}

/** A parameter as both dialects take it: a boolean becomes 1 or 0. */
export function neutralParams(params: readonly unknown[]): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? Number(p) : p));
}

/**
 * The SQL handle of a store that has no SQL (memory): every call rejects with a clear `no_sql`
 * error, so a handler that needs SQL never silently runs against nothing.
 */
export function refusingSqlHandle(storeName: string): SqlHandle {
  const error = (): OncelyError =>
    new OncelyError(
      'no_sql',
      `the ${storeName} store has no SQL: use context.tx (its transaction handle), or a SQLite or PostgreSQL store for context.sql`,
    );
  const refuse = (): Promise<never> => Promise.reject(error());
  return {
    get dialect(): never {
      throw error();
    },
    run: refuse,
    get: refuse,
    all: refuse,
  };
}
