import {
  hasReturning,
  neutralParams,
  returnedResult,
  type SqlHandle,
} from '../../ledger/sql-handle.js';
import type { SqliteTx } from './sqlite-database.js';

/**
 * The dialect-neutral SQL handle over a SQLite transaction. Statements use PostgreSQL's `$1, $2 …`
 * placeholders; here they become `?1, ?2 …`, which better-sqlite3 binds as named parameters
 * `{1: …, 2: …}` (it refuses an array for numbered placeholders), so a placeholder may repeat or
 * come out of order on both dialects.
 */
export function sqliteSql(tx: SqliteTx): SqlHandle {
  const toSqlite = (sql: string): string => sql.replace(/\$(\d+)/g, '?$1');
  const bind = (params: readonly unknown[]): unknown[] =>
    params.length === 0
      ? []
      : [Object.fromEntries(neutralParams(params).map((p, i) => [i + 1, p]))];
  return {
    dialect: 'sqlite',
    // begin(): the transaction takes the writer at its first statement, not before (sqlite-database.ts).
    async run(sql, params = []) {
      await tx.begin();
      // better-sqlite3's run() drops RETURNING rows; all() keeps them, one per changed row.
      if (hasReturning(sql)) return returnedResult(tx.all(toSqlite(sql), ...bind(params)));
      return { rowCount: tx.run(toSqlite(sql), ...bind(params)).changes, insertedId: undefined };
    },
    get: async <R>(sql: string, params: readonly unknown[] = []) => (
      await tx.begin(), tx.get<R>(toSqlite(sql), ...bind(params))
    ),
    all: async <R>(sql: string, params: readonly unknown[] = []) => (
      await tx.begin(), tx.all<R>(toSqlite(sql), ...bind(params))
    ),
  };
}
