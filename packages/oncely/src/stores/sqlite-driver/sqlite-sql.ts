import {
  hasReturning,
  neutralParams,
  returnedResult,
  type SqlHandle,
  type SqlRunResult,
} from '../../ledger/sql-handle.js';
import type { SqliteTx } from './sqlite-database.js';

/**
 * A statement's text as SQLite takes it, worked out once per text. PostgreSQL's `$1, $2 …`
 * placeholders each used once and in order become `?` and bind as a plain list; any other use (a
 * repeat, out of order) becomes `?1, ?2 …`, which better-sqlite3 binds as named parameters
 * `{1: …, 2: …}` (it refuses a list for numbered placeholders).
 */
interface SqliteText {
  readonly source: string;
  readonly positional: boolean;
  readonly returning: boolean;
}

/** Texts seen, up to a bound: an app that splices values into its SQL must not grow it forever. */
const texts = new Map<string, SqliteText>();
const MAX_TEXTS = 1000;

function sqliteText(sql: string): SqliteText {
  let text = texts.get(sql);
  if (text !== undefined) return text;
  const numbers = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
  const positional = numbers.every((n, i) => n === i + 1);
  text = {
    source: positional ? sql.replace(/\$\d+/g, '?') : sql.replace(/\$(\d+)/g, '?$1'),
    positional,
    returning: hasReturning(sql),
  };
  if (texts.size >= MAX_TEXTS) texts.clear();
  texts.set(sql, text);
  return text;
}

function bind(text: SqliteText, params: readonly unknown[]): unknown[] {
  if (params.length === 0) return [];
  const values = neutralParams(params);
  return text.positional ? values : [Object.fromEntries(values.map((p, i) => [i + 1, p]))];
}

/**
 * The dialect-neutral SQL handle over a SQLite transaction (`$1` placeholders, as on PostgreSQL;
 * one may repeat or come out of order on both dialects). A class: one is made per request.
 */
class SqliteSqlHandle implements SqlHandle {
  readonly dialect = 'sqlite';

  constructor(private readonly tx: SqliteTx) {}

  // begin(): the transaction takes the writer at its first statement, not before (sqlite-database.ts).
  async run(sql: string, params: readonly unknown[] = []): Promise<SqlRunResult> {
    await this.tx.begin();
    const text = sqliteText(sql);
    // better-sqlite3's run() drops RETURNING rows; all() keeps them, one per changed row.
    if (text.returning) return returnedResult(this.tx.all(text.source, ...bind(text, params)));
    return {
      rowCount: this.tx.run(text.source, ...bind(text, params)).changes,
      insertedId: undefined,
    };
  }

  async get<R>(sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
    await this.tx.begin();
    const text = sqliteText(sql);
    return this.tx.get<R>(text.source, ...bind(text, params));
  }

  async all<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    await this.tx.begin();
    const text = sqliteText(sql);
    return this.tx.all<R>(text.source, ...bind(text, params));
  }
}

export function sqliteSql(tx: SqliteTx): SqlHandle {
  return new SqliteSqlHandle(tx);
}

/**
 * The rows `sql` returns, run now on a writer already held (a synchronous section). A statement
 * without RETURNING returns none: it is run, not read (better-sqlite3's all() refuses it), and a
 * RETURNING row costs SQLite and better-sqlite3 more than the INSERT it reports (bench/steps).
 */
export function allNow<R>(tx: SqliteTx, sql: string, params: readonly unknown[]): R[] {
  const text = sqliteText(sql);
  if (!text.returning) {
    tx.run(text.source, ...bind(text, params));
    return [];
  }
  return tx.all<R>(text.source, ...bind(text, params));
}
