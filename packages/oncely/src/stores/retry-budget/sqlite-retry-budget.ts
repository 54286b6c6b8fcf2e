import { AsyncMutex } from '../async-mutex.js';
import { StoreClosedError } from '../store-errors.js';
import {
  resolveSharedRetryBudgetOptions,
  SharedRetryBudget,
  type RetryBudgetRow,
  type SharedRetryBudgetOptions,
} from './shared-retry-budget.js';
import type { SqliteDatabase, SqliteStatement } from '../sqlite-driver/sqlite-database.js';
import { checkBusyTimeoutMs, checkSqliteDatabase } from '../sqlite-driver/sqlite-driver-options.js';
import { inWriteTransaction } from '../sqlite-driver/write-lock.js';

export interface SqliteRetryBudgetOptions extends SharedRetryBudgetOptions {
  /**
   * A better-sqlite3@12 connection of its own (not one a journal or ledger store runs
   * transactions on), or a function that opens one on first use (then closed by close()).
   * Every process opens the same file.
   */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** How long an acquire waits for another process's lock on the file. @default 1000 */
  readonly busyTimeoutMs?: number;
}

/**
 * A retry budget shared by every process on one SQLite file (WAL): one row per budget name in
 * `oncely_retry_budgets`. Each take or refund is one short write transaction (BEGIN IMMEDIATE,
 * the lock waited for in the event loop), so two processes never spend the same tokens.
 * `synchronous = NORMAL`: a power cut may forget the last few changes of a budget, never
 * corrupt it, and a budget does not need every write on the disk.
 */
export function createSqliteRetryBudget(options: SqliteRetryBudgetOptions): SharedRetryBudget {
  const resolved = resolveSharedRetryBudgetOptions(options);
  const database = checkSqliteDatabase(options.database);
  const busyTimeoutMs = checkBusyTimeoutMs(options.busyTimeoutMs, 1000);
  const { table, name, clock } = resolved;
  const mutex = new AsyncMutex();
  let db: SqliteDatabase | undefined;
  let closed = false;
  // Prepared once per connection: a take is then a bind and a step, not a parse.
  const statements = new Map<string, SqliteStatement>();
  const prepared = (conn: SqliteDatabase, sql: string): SqliteStatement => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, (statement = conn.prepare(sql)));
    return statement;
  };
  const connection = (): SqliteDatabase => {
    if (closed) throw new StoreClosedError('sqlite');
    if (db) return db;
    db = typeof database === 'function' ? database() : database;
    db.pragma('journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.pragma('busy_timeout = 0');
    return db;
  };
  /** Runs `fn` in one write transaction; the mutex keeps this process's writes in turn. */
  const writing = <T>(fn: (conn: SqliteDatabase) => T): Promise<T> =>
    mutex.run(() => inWriteTransaction(connection, clock, busyTimeoutMs, fn));
  const balanceOf = (conn: SqliteDatabase): number => {
    const row = prepared(conn, `SELECT balance FROM ${table} WHERE name = ?`).get(name) as
      | { balance: number }
      | undefined;
    if (row === undefined)
      throw new Error(`the retry budget ${JSON.stringify(name)} has no row in ${table}`);
    return row.balance;
  };
  const row: RetryBudgetRow = {
    setup: (capacity) =>
      writing((conn) => {
        conn.exec(
          `CREATE TABLE IF NOT EXISTS ${table} (name TEXT PRIMARY KEY, balance REAL NOT NULL, capacity REAL NOT NULL)`,
        );
        conn
          .prepare(
            `INSERT INTO ${table} (name, balance, capacity) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET capacity = excluded.capacity, balance = MIN(balance, excluded.capacity)`,
          )
          .run(name, capacity, capacity);
        return balanceOf(conn);
      }),
    take: (cost) =>
      writing((conn) => {
        const taken = prepared(
          conn,
          `UPDATE ${table} SET balance = balance - ? WHERE name = ? AND balance >= ? RETURNING balance`,
        ).get(cost, name, cost) as { balance: number } | undefined;
        return taken
          ? { taken: true, balance: taken.balance }
          : { taken: false, balance: balanceOf(conn) };
      }),
    give: (tokens) =>
      writing((conn) => {
        prepared(
          conn,
          `UPDATE ${table} SET balance = MIN(capacity, balance + ?) WHERE name = ?`,
        ).run(tokens, name);
        return balanceOf(conn);
      }),
    close: () =>
      mutex.run(() => {
        if (closed) return;
        closed = true;
        statements.clear();
        if (typeof database === 'function') db?.close();
        db = undefined;
      }),
  };
  return new SharedRetryBudget(row, resolved);
}
