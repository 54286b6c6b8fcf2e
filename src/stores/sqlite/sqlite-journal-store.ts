import { InvalidOptionError } from '../../contract/errors.js';
import type { JournalStore } from '../../journal/journal-store.js';
import type { SqlHandle } from '../../ledger/sql-handle.js';
import { AsyncMutex } from '../async-mutex.js';
import { journalDdl } from '../journal-row.js';
import { checkIdentifier } from '../ledger-row.js';
import { StoreClosedError } from '../store-errors.js';
import { createSqlJournalStore, type JournalQuery } from '../sql-journal-store.js';
import type { SqliteDatabase, SqliteTx } from './sqlite-database.js';

export interface SqliteJournalStoreOptions {
  /** A better-sqlite3@12 connection, or a function that opens one on first use (then closed by close()). */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** @default 'oncely_intents' (attempts go to `<table>_attempts`) */
  readonly table?: string;
  /** How long a write waits for another process's lock on the file. @default 5000 */
  readonly busyTimeoutMs?: number;
}

/** The caller's transaction for `recordWithin`: the ledger's SqliteTx, or the raw connection inside BEGIN. */
export type SqliteJournalTx = SqliteTx | SqliteDatabase;

interface Statement {
  readonly reader?: boolean;
  run(...params: unknown[]): { readonly changes: number };
  all(...params: unknown[]): unknown[];
}

/** SQLite numbers its parameters `?1`; the journal's statements are written with `$1`. */
const numbered = (sql: string): string => sql.replace(/\$(\d+)/g, '?$1');
/** better-sqlite3 binds `?1, ?2` as named parameters `{1: …, 2: …}` and refuses an array. */
const named = (params: readonly unknown[] = []): unknown[] =>
  params.length === 0 ? [] : [Object.fromEntries(params.map((p, i) => [i + 1, p]))];

/**
 * The journal on SQLite (the default): WAL, `synchronous = FULL`, so every claim, attempt start
 * and settlement has reached the disk when it resolves (docs/origins.md, "The dropbox's swallowed ack": "you need a disk and a
 * write-ahead log"). Writers in other processes on the same file wait for the lock (BEGIN
 * IMMEDIATE, busy_timeout), so two workers never lease one intent. In this process, one async
 * mutex keeps transactions from interleaving on the single connection.
 */
export function createSqliteJournalStore(
  options: SqliteJournalStoreOptions,
): JournalStore<SqliteJournalTx | SqlHandle> {
  const { database } = options;
  if (typeof database !== 'function' && typeof database?.prepare !== 'function') {
    throw new InvalidOptionError(
      'database',
      database,
      'a better-sqlite3 Database or a function returning one',
    );
  }
  const table = checkIdentifier('table', options.table ?? 'oncely_intents');
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new InvalidOptionError(
      'busyTimeoutMs',
      busyTimeoutMs,
      'a whole number of milliseconds >= 0',
    );
  }
  const mutex = new AsyncMutex();
  const cache = new Map<string, Statement>();
  let db: SqliteDatabase | undefined;
  let closed = false;

  const connection = (): SqliteDatabase => {
    if (closed) throw new StoreClosedError('sqlite');
    if (db) return db;
    db = typeof database === 'function' ? database() : database;
    db.pragma('journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    return db;
  };
  const run = (
    conn: { prepare(sql: string): unknown },
    sql: string,
    params: readonly unknown[] = [],
    cached = true,
  ) => {
    const text = numbered(sql);
    let statement = cached ? cache.get(text) : undefined;
    if (!statement) {
      statement = conn.prepare(text) as Statement;
      if (cached) cache.set(text, statement);
    }
    return statement.reader
      ? { rows: statement.all(...named(params)) as Record<string, unknown>[], changes: 0 }
      : { rows: [], changes: statement.run(...named(params)).changes };
  };
  const onConnection: JournalQuery = async (sql, params) =>
    mutex.run(() => run(connection(), sql, params));

  return createSqlJournalStore<SqliteJournalTx>({
    name: 'sqlite',
    intents: table,
    attempts: `${table}_attempts`,
    ddl: journalDdl(table, `${table}_attempts`, {
      bigint: 'INTEGER',
      bytes: 'BLOB',
      serial: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    }),
    lockClause: '',
    jsonRows: (param, columns) =>
      `(SELECT ${columns.map((c) => `json_extract(value, '$.${c.name}') AS ${c.name}`).join(', ')} FROM json_each(${param})) AS s`,
    writableCte: false,
    returningKey: 'key',
    fromHex: (expression) => `unhex(${expression})`,
    setup: (ddl) => mutex.run(() => void connection().exec(ddl)),
    query: onConnection,
    transaction: (fn) =>
      mutex.run(async () => {
        const conn = connection();
        conn.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(async (sql, params) => run(conn, sql, params));
          conn.exec('COMMIT');
          return result;
        } catch (error) {
          if (conn.inTransaction) conn.exec('ROLLBACK');
          throw error;
        }
      }),
    // The caller's connection may not be ours: prepare on it, uncached.
    within: (tx) => async (sql, params) => {
      if ('prepare' in tx) return run(tx, sql, params, tx === db);
      await tx.begin(); // the ledger's transaction takes the writer at its first statement
      const text = numbered(sql);
      return /^\s*(SELECT|WITH)/i.test(text) || /RETURNING/i.test(text)
        ? { rows: tx.all(text, ...named(params)), changes: 0 }
        : { rows: [], changes: tx.run(text, ...named(params)).changes };
    },
    close: () =>
      mutex.run(() => {
        if (closed) return;
        closed = true;
        cache.clear();
        if (typeof database === 'function') db?.close();
        db = undefined;
      }),
  });
}
