import {
  checkBusyTimeoutMs,
  checkSqliteDatabase,
} from '../../sqlite-driver/sqlite-driver-options.js';
import type { JournalStore } from '../../../journal/journal-store.js';
import type { CarriesSqlHandle, SqlHandle } from '../../../ledger/sql-handle.js';
import { AsyncMutex } from '../../async-mutex.js';
import { journalDdl } from '../sql/journal-row.js';
import { endpointDdl, INTENT_ENDPOINT_COLUMN } from '../sql/endpoint-row.js';
import { checkIdentifier } from '../../ledger/ledger-row.js';
import { StoreClosedError } from '../../store-errors.js';
import { createSqlJournalStore, type JournalQuery } from '../sql/sql-journal-store.js';
import type { SqliteDatabase, SqliteTx } from '../../sqlite-driver/sqlite-database.js';
import { dataVersionOf, withDataVersionWake } from './data-version-wake.js';
import { inWriteTransaction } from '../../sqlite-driver/write-lock.js';
import { systemClock, type Clock } from '../../../time/clock.js';
import { resolve } from 'node:path';
import { inProcessWake } from '../journal-wake.js';

export interface SqliteJournalStoreOptions {
  /** A better-sqlite3@12 connection, or a function that opens one on first use (then closed by close()). */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** @default 'oncely_intents' (attempts go to `<table>_attempts`) */
  readonly table?: string;
  /** How long a write waits for another process's lock on the file. @default 5000 */
  readonly busyTimeoutMs?: number;
  /** What a write waiting for that lock sleeps on between tries (write-lock.ts). @default the system clock */
  readonly clock?: Clock;
}

/** The caller's transaction for `recordWithin`: the ledger's SqliteTx, or the raw connection inside BEGIN. */
export type SqliteJournalTx = SqliteTx | SqliteDatabase;

interface Statement {
  readonly reader?: boolean;
  /** False for a statement that writes (better-sqlite3's `readonly`; a RETURNING one reads and writes). */
  readonly readonly?: boolean;
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
 * write-ahead log"). Every write takes the file's lock first (BEGIN IMMEDIATE, waited for in the
 * event loop, at most busyTimeoutMs), so two workers never lease one intent. In this process, one async
 * mutex keeps transactions from interleaving on the single connection.
 */
/**
 * The wake channel of a journal on a SQLite file: stores opened on one file and table in this
 * process wake each other's workers. A database given as a factory, or one in memory, is known
 * only to its own store.
 */
function sharedChannel(
  database: SqliteDatabase | (() => SqliteDatabase),
  table: string,
): string | undefined {
  const file = typeof database === 'function' ? undefined : database.name;
  return file === undefined || file === '' || file === ':memory:'
    ? undefined
    : `sqlite:${resolve(file)}:${table}`;
}

export function createSqliteJournalStore(
  options: SqliteJournalStoreOptions,
): JournalStore<SqliteJournalTx | SqlHandle | CarriesSqlHandle> {
  const { database, table, busyTimeoutMs, clock } = checkedOptions(options);
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
    // Writes never wait inside SQLite, which would freeze this process: they wait for another
    // process's lock in the event loop (write-lock.ts), in a transaction of their own.
    db.pragma('busy_timeout = 0');
    return db;
  };
  const prepare = (conn: { prepare(sql: string): unknown }, text: string, cached: boolean) => {
    let statement = cached ? cache.get(text) : undefined;
    if (!statement) {
      statement = conn.prepare(text) as Statement;
      if (cached) cache.set(text, statement);
    }
    return statement;
  };
  const runStatement = (statement: Statement, params: readonly unknown[] = []) =>
    statement.reader
      ? { rows: statement.all(...named(params)) as Record<string, unknown>[], changes: 0 }
      : { rows: [], changes: statement.run(...named(params)).changes };
  const run = (
    conn: { prepare(sql: string): unknown },
    sql: string,
    params: readonly unknown[] = [],
    cached = true,
  ) => runStatement(prepare(conn, numbered(sql), cached), params);
  /** Runs `fn` in BEGIN IMMEDIATE ... COMMIT, the lock waited for in the event loop. */
  const writing = <T>(fn: (conn: SqliteDatabase) => T | Promise<T>): Promise<T> =>
    inWriteTransaction(connection, clock, busyTimeoutMs, fn);
  const onConnection: JournalQuery = async (sql, params) =>
    mutex.run(() => {
      const statement = prepare(connection(), numbered(sql), true);
      return statement.readonly
        ? runStatement(statement, params)
        : writing(() => runStatement(statement, params));
    });

  return createSqlJournalStore<SqliteJournalTx>({
    name: 'sqlite',
    wake: withDataVersionWake(
      inProcessWake(sharedChannel(database, table)),
      // Only a connection already open is read: a watch alone opens nothing.
      dataVersionOf(() => (closed ? undefined : db)),
      clock,
    ),
    intents: table,
    attempts: `${table}_attempts`,
    endpoints: `${table}_endpoints`,
    ddl: `${journalDdl(table, `${table}_attempts`, {
      bigint: 'INTEGER',
      bytes: 'BLOB',
      serial: 'INTEGER PRIMARY KEY AUTOINCREMENT',
      addColumn: 'ADD COLUMN',
    })};
ALTER TABLE ${table} ADD COLUMN ${INTENT_ENDPOINT_COLUMN.name} ${INTENT_ENDPOINT_COLUMN.type};
${endpointDdl(`${table}_endpoints`, 'INTEGER')};`,
    nextSeq: `(SELECT MAX(seq) + 1 FROM ${table})`,
    lockClause: '',
    rowLockClause: '',
    jsonRows: (param, columns) =>
      `(SELECT ${columns.map((c) => `json_extract(value, '$.${c.name}') AS ${c.name}`).join(', ')} FROM json_each(${param})) AS s`,
    writableCte: false,
    returningKey: 'key',
    fromHex: (expression) => `unhex(${expression})`,
    setup: (ddl) => mutex.run(() => writing((conn) => applyDdl(conn, ddl))),
    query: onConnection,
    transaction: (fn) =>
      mutex.run(() => writing((conn) => fn(async (sql, params) => run(conn, sql, params)))),
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

/** The options checked once, at the edge, with the defaults filled in. */
function checkedOptions(options: SqliteJournalStoreOptions) {
  const database = checkSqliteDatabase(options.database);
  const table = checkIdentifier('table', options.table ?? 'oncely_intents');
  const busyTimeoutMs = checkBusyTimeoutMs(options.busyTimeoutMs, 5000);
  const clock = options.clock ?? systemClock;
  return { database, table, busyTimeoutMs, clock };
}

/**
 * The journal's DDL, statement by statement. SQLite has no ADD COLUMN IF NOT EXISTS: a column
 * that a table made by this oncely has already is "duplicate column name", and passed over.
 */
function applyDdl(conn: SqliteDatabase, ddl: string): void {
  for (const statement of ddl.split(';').filter((s) => s.trim() !== '')) {
    try {
      conn.exec(statement);
    } catch (error) {
      const added = /^\s*ALTER TABLE \S+ ADD COLUMN /i.test(statement);
      if (!added || !/duplicate column name/i.test(String(error))) throw error;
    }
  }
}
