import {
  hasReturning,
  neutralParams,
  returnedResult,
  type SqlHandle,
} from '../../ledger/sql-handle.js';
import type { PgQueryConfig, PgTx } from './pg-pool.js';
import { preparedByText } from './prepared-by-text.js';

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

/**
 * LedgerStore.commitAlone on PostgreSQL: the statement sent alone, prepared (parsed and planned
 * once per connection), in one round trip. Its implicit transaction commits at the store's
 * durability: the outer SELECT sets the commit's level as the receipt's does, once the statement
 * returned a row. It must have RETURNING; a statement that wrote no row has nothing to make durable.
 */
export function postgresCommitAlone(
  query: (statement: PgQueryConfig) => Promise<{ rows: unknown[] }>,
  commitLevel: string,
): (sql: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]> {
  const wrapped = new Map<string, string>();
  return async (sql, params) => {
    let text = wrapped.get(sql);
    if (text === undefined) {
      if (wrapped.size >= MAX_WRAPPED) wrapped.clear();
      text = `WITH alone AS (${sql}) SELECT alone.*, (${commitLevel}) AS oncely_commit_level FROM alone`;
      wrapped.set(sql, text);
    }
    const { rows } = await query(preparedByText(text, neutralParams(params)));
    return rows as Record<string, unknown>[];
  };
}

/** Texts wrapped, up to a bound (the steps' batches use at most 64). */
const MAX_WRAPPED = 200;
