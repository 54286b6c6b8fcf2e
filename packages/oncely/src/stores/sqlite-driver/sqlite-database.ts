/**
 * The part of a better-sqlite3 connection the store uses (docs/design.md, habit 4, after kysely's
 * `SqliteDatabase`): the store never imports the driver's types, and a test can hand it a fake.
 */
export interface SqliteStatement {
  run(...params: unknown[]): { readonly changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface SqliteDatabase {
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
  readonly inTransaction: boolean;
  /** The file it opened (better-sqlite3's `name`). */
  readonly name?: string;
}

/**
 * The SQLite store's transaction handle: the same connection, and the same savepoint, as the
 * ledger's receipt write, so the effect's statements and the receipt commit together. Valid only
 * while its transaction runs; statements are prepared once per SQL text and cached.
 *
 * The transaction takes the store's single writer only at `begin()`, not when the effect starts:
 * an effect awaits what it must (an HTTP call, a queue) first, then `await tx.begin()`, then runs
 * its statements synchronously. A statement before `begin()` throws: a synchronous call cannot
 * wait for the writer, and running it outside the savepoint would break the all-or-nothing rule.
 * The receivers' SQL runner (apps/receivers/sql) calls `begin()` itself.
 */
export interface SqliteTx {
  /** Takes the writer and opens this transaction's savepoint; a no-op once begun. */
  begin(): Promise<void>;
  /** INSERT/UPDATE/DELETE; returns the number of rows changed (and the last inserted rowid). */
  run(
    sql: string,
    ...params: unknown[]
  ): { readonly changes: number; readonly lastInsertRowid?: number | bigint };
  /** The first row, or undefined. */
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T | undefined;
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  /** Several statements, no parameters (DDL). */
  exec(sql: string): void;
}
