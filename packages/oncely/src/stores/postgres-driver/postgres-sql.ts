import {
  hasReturning,
  neutralParams,
  returnedResult,
  type SqlHandle,
} from '../../ledger/sql-handle.js';
import type { PgTx } from './pg-pool.js';

/** The dialect-neutral SQL handle over a PostgreSQL transaction (the client that writes the receipt). */
export function postgresSql(tx: PgTx): SqlHandle {
  return {
    dialect: 'postgres',
    async run(sql, params = []) {
      const result = await tx.query(sql, neutralParams(params));
      return hasReturning(sql)
        ? returnedResult(result.rows)
        : { rowCount: result.rowCount, insertedId: undefined };
    },
    get: async <R>(sql: string, params: readonly unknown[] = []) =>
      (await tx.query<R>(sql, neutralParams(params))).rows[0],
    all: async <R>(sql: string, params: readonly unknown[] = []) =>
      (await tx.query<R>(sql, neutralParams(params))).rows,
  };
}
