import { InvalidOptionError } from '../../contract/errors.js';
import { checkIdentifier } from '../ledger/ledger-row.js';
import { StoreClosedError } from '../store-errors.js';
import { preparedByText } from '../postgres-driver/prepared-by-text.js';
import {
  resolveSharedRetryBudgetOptions,
  SharedRetryBudget,
  type RetryBudgetRow,
  type SharedRetryBudgetOptions,
} from './shared-retry-budget.js';
import type { PgPool } from '../postgres-driver/pg-pool.js';

export interface PostgresRetryBudgetOptions extends SharedRetryBudgetOptions {
  /** A `pg` Pool (the application's own will do), or a function that makes one (ended by close()). */
  readonly pool: PgPool | (() => PgPool);
  /** @default undefined (the connection's search_path) */
  readonly schema?: string | undefined;
}

/**
 * A retry budget shared by every process on one PostgreSQL database: one row per budget name.
 * A take is one statement, `UPDATE … WHERE balance >= cost`, whose row lock makes concurrent
 * takes queue on the row: no two processes spend the same tokens. A refund is one UPDATE capped
 * at the row's capacity. Both are single round trips on the pool, outside any transaction.
 */
export function createPostgresRetryBudget(options: PostgresRetryBudgetOptions): SharedRetryBudget {
  const resolved = resolveSharedRetryBudgetOptions(options);
  const { pool: poolOption } = options;
  if (typeof poolOption !== 'function' && typeof poolOption?.connect !== 'function')
    throw new InvalidOptionError('pool', poolOption, 'a pg Pool or a function returning one');
  const schema =
    options.schema === undefined ? undefined : checkIdentifier('schema', options.schema);
  const table = schema === undefined ? `"${resolved.table}"` : `"${schema}"."${resolved.table}"`;
  const { name } = resolved;
  let pool: PgPool | undefined;
  let closed = false;
  const thePool = (): PgPool => {
    if (closed) throw new StoreClosedError('postgres');
    return (pool ??= typeof poolOption === 'function' ? poolOption() : poolOption);
  };
  const balanceOf = (rows: unknown[]): number => {
    const row = rows[0] as { balance: number | null } | undefined;
    if (row?.balance === undefined || row.balance === null)
      throw new Error(`the retry budget ${JSON.stringify(name)} has no row in ${table}`);
    return Number(row.balance);
  };
  const row: RetryBudgetRow = {
    async setup(capacity) {
      const client = await thePool().connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        // Two processes starting together would race on CREATE TABLE IF NOT EXISTS.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`oncely:${table}`]);
        if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${table} (name TEXT PRIMARY KEY, balance DOUBLE PRECISION NOT NULL, capacity DOUBLE PRECISION NOT NULL)`,
        );
        const result = await client.query(
          `INSERT INTO ${table} AS b (name, balance, capacity) VALUES ($1, $2, $2) ON CONFLICT (name) DO UPDATE SET capacity = excluded.capacity, balance = LEAST(b.balance, excluded.capacity) RETURNING balance`,
          [name, capacity],
        );
        await client.query('COMMIT');
        return balanceOf(result.rows);
      } catch (error) {
        await client.query('ROLLBACK').catch(() => void (broken = true));
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async take(cost) {
      // The outer SELECT reads the row as it was before the UPDATE: the balance that refused.
      // Named after a hash of the text: a name after the table passed PostgreSQL's 63 characters
      // with a long schema name, and was cut short (two tables' names could then meet).
      const result = await thePool().query(
        preparedByText(
          `WITH taken AS (UPDATE ${table} SET balance = balance - $2 WHERE name = $1 AND balance >= $2 RETURNING balance) SELECT (SELECT balance FROM taken) AS taken, (SELECT balance FROM ${table} WHERE name = $1) AS balance`,
          [name, cost],
        ),
      );
      const found = result.rows[0] as { taken: number | null; balance: number | null };
      if (found.taken !== null) return { taken: true, balance: Number(found.taken) };
      return { taken: false, balance: balanceOf(result.rows) };
    },
    async give(tokens) {
      const result = await thePool().query(
        preparedByText(
          `UPDATE ${table} SET balance = LEAST(capacity, balance + $2) WHERE name = $1 RETURNING balance`,
          [name, tokens],
        ),
      );
      return balanceOf(result.rows);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (typeof poolOption === 'function' && pool) await pool.end();
      pool = undefined;
    },
  };
  return new SharedRetryBudget(row, resolved);
}
