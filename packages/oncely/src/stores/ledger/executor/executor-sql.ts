import {
  hasReturning,
  neutralParams,
  returnedResult,
  type SqlDialect,
  type SqlHandle,
} from '../../../ledger/sql-handle.js';
import type { InTransaction } from './executor-ledger.js';
import { dollarToQuestion } from '../../orm/placeholders.js';
import type { ExecutorRows } from '../../orm/sql-executor.js';

/**
 * The dialect-neutral SQL handle (`context.sql`) over an ORM transaction: `$1 …` placeholders on
 * both dialects (rewritten to `?` for SQLite), booleans as 1/0, the same results as the built-in
 * stores' handles. Its statements join the ORM transaction the route's own writes go through.
 */
export function executorSql(dialect: SqlDialect, transaction: InTransaction): SqlHandle {
  const send = (sql: string, params: readonly unknown[]): Promise<ExecutorRows> => {
    const values = neutralParams(params);
    if (dialect === 'postgres') return transaction.query(sql, values);
    const positional = dollarToQuestion(sql, values);
    return transaction.query(positional.sql, positional.params);
  };
  return {
    dialect,
    async run(sql, params = []) {
      const result = await send(sql, params);
      return hasReturning(sql)
        ? returnedResult(result.rows)
        : { rowCount: result.rowCount, insertedId: undefined };
    },
    get: async <R>(sql: string, params: readonly unknown[] = []) =>
      (await send(sql, params)).rows[0] as R | undefined,
    all: async <R>(sql: string, params: readonly unknown[] = []) =>
      (await send(sql, params)).rows as R[],
  };
}
