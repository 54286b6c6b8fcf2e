import type { SqlDialect } from '../../ledger/sql-handle.js';

/** What one statement gave back, whatever the driver: its rows, and how many rows it changed or returned. */
export interface ExecutorRows {
  readonly rows: Record<string, unknown>[];
  readonly rowCount: number;
}

/**
 * What an executor can do, declared by it rather than found by probing for methods
 * (docs/design.md, "Stores: one path each").
 */
export interface ExecutorCapabilities {
  /**
   * Transactions of concurrent requests run side by side, each on a pooled connection of its own
   * (PostgreSQL pools). False where every statement shares one connection (SQLite drivers):
   * a transaction then holds that connection from its first statement to its COMMIT.
   */
  readonly concurrentTransactions: boolean;
  /**
   * Methods of the ORM's transaction object that end it early (Knex's `commit` and `rollback`):
   * the handle refuses them, since the ledger commits the effect with its receipt. A route that
   * must give up throws instead.
   */
  readonly endingMethods: readonly string[];
}

/**
 * How the ledger's statements reach the database, and inside whose transaction: node-postgres,
 * better-sqlite3, or an ORM (Kysely, Knex, Drizzle), whose transaction object is `Tx`.
 *
 * Statements come in the dialect's own placeholders (`$1 …` on PostgreSQL, `?` on SQLite); an
 * executor whose driver wants others rewrites them. Everything goes through the app's own client,
 * so the ORM owns the connections: no pool beside the app's.
 */
export interface SqlExecutor<Tx> {
  /** The ORM, for messages: 'kysely', 'knex', 'drizzle'. */
  readonly name: string;
  readonly dialect: SqlDialect;
  readonly capabilities: ExecutorCapabilities;
  /** One statement on its own, committed by itself, on a connection of the app's client. */
  query(sql: string, params: readonly unknown[]): Promise<ExecutorRows>;
  /**
   * `fn` inside one transaction of the ORM, given the ORM's own transaction object: it commits
   * when `fn` resolves and rolls back when `fn` rejects (the ORM's callback-shaped transaction).
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** One statement inside `tx`, a transaction object this executor's `transaction` gave. */
  queryIn(tx: Tx, sql: string, params: readonly unknown[]): Promise<ExecutorRows>;
  /**
   * True when `error`, raised by a statement or a commit, says the connection or the database
   * failed (it went away, ran out of room, the pool found no connection in time), rather than
   * the statement: the ledger answers 503 + Retry-After then, never 500. It looks through the
   * ORM's own wrappers (an error's `cause`) to the driver's error.
   */
  isUnavailable(error: unknown): boolean;
  /** True when `value` is a transaction object of this executor's ORM (not its base client). */
  isTransaction(value: unknown): boolean;
  /** Ends what the executor made itself (nothing: the app's client stays the app's). */
  close?(): Promise<void>;
}

/**
 * The error, and the errors it wraps (`cause`), up to a few levels: Drizzle wraps a driver's
 * error in a DrizzleQueryError; the driver's code is on the cause.
 */
export function* causes(error: unknown): Generator<unknown> {
  let current = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}
