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
}

/**
 * The SQLite store's transaction handle: the same connection as the ledger's receipt write, so the
 * effect's statements and the receipt commit together. Valid only while its transaction runs;
 * statements are prepared once per SQL text and cached.
 */
export interface SqliteTx {
  /** INSERT/UPDATE/DELETE; returns the number of rows changed. */
  run(sql: string, ...params: unknown[]): { readonly changes: number };
  /** The first row, or undefined. */
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T | undefined;
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): T[];
  /** Several statements, no parameters (DDL). */
  exec(sql: string): void;
}
