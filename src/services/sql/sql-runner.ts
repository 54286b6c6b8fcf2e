import type { SqliteTx } from '../../stores/sqlite/sqlite-database.js';
import type { PgTx } from '../../stores/postgres/pg-pool.js';

export const SQL_DIALECTS = ['sqlite', 'postgres'] as const;
export type SqlDialect = (typeof SQL_DIALECTS)[number];

/**
 * The few SQL calls a service makes, the same on SQLite and PostgreSQL, so each service has one
 * code path for both. Statements use PostgreSQL's `$1, $2 …` placeholders; on SQLite they become
 * `?1, ?2 …`, which better-sqlite3 binds as named parameters `{1: …, 2: …}` (it refuses an array
 * for numbered placeholders), so a placeholder may repeat or come out of order on both dialects.
 */
export interface SqlRunner {
  readonly dialect: SqlDialect;
  /** Rows of a SELECT (or of a statement with RETURNING). */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** INSERT/UPDATE/DELETE; the number of rows changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

/** A runner over a SQLite transaction handle. */
export function sqliteRunner(tx: SqliteTx): SqlRunner {
  const toSqlite = (sql: string): string => sql.replace(/\$(\d+)/g, '?$1');
  const bind = (params: readonly unknown[]): unknown[] =>
    params.length === 0 ? [] : [Object.fromEntries(params.map((p, i) => [i + 1, typeof p === 'boolean' ? Number(p) : p]))];
  return {
    dialect: 'sqlite',
    query: async <R>(sql: string, params: readonly unknown[] = []) => tx.all<R>(toSqlite(sql), ...bind(params)),
    run: async (sql, params = []) => tx.run(toSqlite(sql), ...bind(params)).changes,
  };
}

/** A runner over a PostgreSQL transaction handle (the same client as the ledger's receipt write). */
export function postgresRunner(tx: PgTx): SqlRunner {
  return {
    dialect: 'postgres',
    query: async <R>(sql: string, params: readonly unknown[] = []) => (await tx.query<R>(sql, [...params])).rows,
    run: async (sql, params = []) => (await tx.query(sql, [...params])).rowCount,
  };
}
