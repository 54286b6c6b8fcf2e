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
import {
  createSqlJournalStore,
  type JournalSqlBackend,
  type JsonColumn,
} from '../sql/sql-journal-store.js';
import type { SqliteDatabase, SqliteTx } from '../../sqlite-driver/sqlite-database.js';
import { dataVersionOf, withDataVersionWake } from './data-version-wake.js';
import { inWriteTransaction, setSyncLevel } from '../../sqlite-driver/write-lock.js';
import { systemClock, type Clock } from '../../../time/clock.js';
import { resolve } from 'node:path';
import { inProcessWake } from '../journal-wake.js';
import { DURABILITIES, type Durability } from '../../../ledger/ledger-store.js';
import { InvalidOptionError } from '../../../contract/errors.js';
import type { CommitSync } from '../../sqlite-driver/write-lock.js';

/** SQLite's `synchronous = FULL`: a record's commit fsyncs. */
const FULL = 2;

export interface SqliteJournalStoreOptions {
  /** A better-sqlite3@12 connection, or a function that opens one on first use (then closed by close()). */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** @default 'oncely_intents' (attempts go to `<table>_attempts`) */
  readonly table?: string;
  /** How long a write waits for another process's lock on the file. @default 5000 */
  readonly busyTimeoutMs?: number;
  /** What a write waiting for that lock sleeps on between tries (write-lock.ts). @default the system clock */
  readonly clock?: Clock;
  /**
   * What the worker's writes (claims, attempt starts, settlements) survive. A record is always
   * durable (`synchronous = FULL`). 'process': the worker's commits skip the fsync
   * (`synchronous = NORMAL` for those transactions only) and survive a crash of the process, not
   * a power cut; what a power cut may undo is sent again under the same idempotency key
   * (docs/outbox.md, "What a power cut undoes"). 'durable': every commit fsyncs. @default 'process'
   */
  readonly workerDurability?: Durability;
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
 * The wake channel of a journal on a SQLite file: stores opened on one file and table in this
 * process wake each other's workers. Known once the connection is open (a database given as a
 * factory opens on first use); a database in memory is known only to its own store.
 */
function sharedChannel(connection: () => SqliteDatabase | undefined, table: string) {
  let channel: string | undefined;
  return (): string | undefined => {
    if (channel !== undefined) return channel;
    const file = connection()?.name;
    if (file === undefined || file === '' || file === ':memory:') return undefined;
    return (channel = `sqlite:${resolve(file)}:${table}`);
  };
}

/** The store's methods that only a worker calls: their transactions commit at `workerDurability`. */
// `capabilities` carries the worker's claim-and-start and its take-back (JournalCapabilities).
const WORKER_WRITES = [
  'claim',
  'startAttempts',
  'settle',
  'capabilities',
] as const satisfies readonly (keyof JournalStore)[];

/**
 * The journal on SQLite (the default): WAL; a record commits at `synchronous = FULL`, so it has
 * reached the disk when it resolves (docs/origins.md, "The dropbox's swallowed ack": "you need a
 * disk and a write-ahead log"), and so do a reopening, a cancel and an endpoint's change. The
 * worker's claims, attempt starts and settlements commit at `workerDurability` ('process' by
 * default: no fsync). Every write takes the file's lock first (BEGIN IMMEDIATE, waited for in the
 * event loop, at most busyTimeoutMs), so two workers never lease one intent. In this process, one
 * async mutex keeps transactions from interleaving on the single connection.
 */
export function createSqliteJournalStore(
  options: SqliteJournalStoreOptions,
): JournalStore<SqliteJournalTx | SqlHandle | CarriesSqlHandle> {
  const { database, table, busyTimeoutMs, clock, workerDurability } = checkedOptions(options);
  const mutex = new AsyncMutex();
  const cache = new Map<string, Statement>();
  let db: SqliteDatabase | undefined;
  let closed = false;
  let setUp: Promise<void> | undefined;

  const connection = (): SqliteDatabase => {
    if (closed) throw new StoreClosedError('sqlite');
    if (db) return db;
    db = typeof database === 'function' ? database() : database;
    db.pragma('journal_mode = WAL');
    setSyncLevel(db, FULL);
    // Writes never wait inside SQLite, which would freeze this process: they wait for another
    // process's lock in the event loop (write-lock.ts), in a transaction of their own.
    db.pragma('busy_timeout = 0');
    return db;
  };
  /** The connection if one is open: a watch alone opens nothing. */
  const opened = (): SqliteDatabase | undefined => (closed ? undefined : db);
  /** `text` as written ($1): cached by it, so a batch's long statement is renumbered once. */
  const prepare = (conn: { prepare(sql: string): unknown }, text: string, cached: boolean) => {
    let statement = cached ? cache.get(text) : undefined;
    if (!statement) {
      statement = conn.prepare(numbered(text)) as Statement;
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
  ) => runStatement(prepare(conn, sql, cached), params);
  /** Runs `fn` in BEGIN IMMEDIATE ... COMMIT, the lock waited for in the event loop. */
  const writing = <T>(
    fn: (conn: SqliteDatabase) => T | Promise<T>,
    sync: CommitSync = 'fsync',
  ): Promise<T> => inWriteTransaction(connection, clock, busyTimeoutMs, fn, sync);
  const wake = withDataVersionWake(
    inProcessWake(sharedChannel(opened, table)),
    dataVersionOf(opened),
    clock,
  );

  /** The backend whose writes commit at `sync`: one connection, mutex and wake for both. */
  const backendAt = (sync: CommitSync): JournalSqlBackend<SqliteJournalTx> => ({
    ...sqliteDialect(table),
    wake,
    // Both backends' stores ask: the DDL runs once.
    setup: (ddl) =>
      (setUp ??= mutex
        .run(() => writing((conn) => applyDdl(conn, ddl)))
        .catch((error) => {
          setUp = undefined;
          throw error;
        })),
    query: (sql, params) =>
      mutex.run(() => {
        const statement = prepare(connection(), sql, true);
        return statement.readonly
          ? runStatement(statement, params)
          : writing(() => runStatement(statement, params), sync);
      }),
    transaction: (fn) =>
      mutex.run(() => writing((conn) => fn(async (sql, params) => run(conn, sql, params)), sync)),
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

  const store = createSqlJournalStore(backendAt('fsync'));
  if (workerDurability === 'durable') return store;
  const worker = createSqlJournalStore(backendAt('no-fsync'));
  const workerWrites = Object.fromEntries(WORKER_WRITES.map((name) => [name, worker[name]]));
  return { ...store, ...workerWrites } as typeof store;
}

/** The journal's statements in SQLite's words: what needs no connection. */
function sqliteDialect(table: string) {
  return {
    name: 'sqlite',
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
    jsonRows: (param: string, columns: readonly JsonColumn[]) =>
      `(SELECT ${columns.map((c) => `json_extract(value, '$.${c.name}') AS ${c.name}`).join(', ')} FROM json_each(${param})) AS s`,
    writableCte: false,
    returningKey: 'key',
    fromHex: (expression: string) => `unhex(${expression})`,
  } as const;
}

/** The options checked once, at the edge, with the defaults filled in. */
function checkedOptions(options: SqliteJournalStoreOptions) {
  const database = checkSqliteDatabase(options.database);
  const table = checkIdentifier('table', options.table ?? 'oncely_intents');
  const busyTimeoutMs = checkBusyTimeoutMs(options.busyTimeoutMs, 5000);
  const clock = options.clock ?? systemClock;
  const workerDurability = options.workerDurability ?? 'process';
  if (!DURABILITIES.includes(workerDurability))
    throw new InvalidOptionError('workerDurability', workerDurability, DURABILITIES.join(' or '));
  return { database, table, busyTimeoutMs, clock, workerDurability };
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
