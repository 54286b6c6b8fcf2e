import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion, LedgerEntry } from '../../ledger/ledger-entry.js';
import { DURABILITIES, type Durability, type LedgerStore } from '../../ledger/ledger-store.js';
import {
  LEDGER_COLUMNS,
  checkIdentifier,
  entryValues,
  rowToEntry,
  type LedgerRow,
} from '../ledger-row.js';
import { StoreClosedError } from '../store-errors.js';
import { LedgerLayoutError } from '../ledger-layout-error.js';
import { GroupCommit } from './group-commit.js';
import type { SqliteDatabase, SqliteStatement, SqliteTx } from './sqlite-database.js';
import {
  housekeepSqlite,
  prepareSqliteFile,
  type SqliteHousekeepingReport,
} from './sqlite-housekeeping.js';
import { sqliteSql } from './sqlite-sql.js';
import { sqliteSweep, type BacklogCursor } from './sqlite-sweep.js';
import { sqliteTombstones } from './sqlite-tombstones.js';
import { isEarlierSqliteLayout, sqliteLedgerSchema } from './sqlite-ledger-schema.js';
import { sqliteTransaction } from './sqlite-transaction.js';
import { beginImmediate, isBusy } from './write-lock.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { isSqliteUnavailable } from './sqlite-unavailable.js';

export interface SqliteStoreOptions {
  /**
   * A better-sqlite3@12 connection, or a function that opens one. A function is called twice
   * when the file is in WAL mode: a writer and a read-only connection for lookups, replays and
   * listings, so reads never queue behind a write. The store closes connections it opened.
   */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** The ledger's table, created if missing. @default 'oncely_ledger' */
  readonly table?: string;
  /**
   * How long a write waits for another process's lock on the file. The store waits itself, in the
   * event loop (write-lock.ts), and sets `busy_timeout = 0` on its writer, a connection given as an
   * object included: SQLite's own wait would freeze the process. @default 5000
   */
  readonly busyTimeoutMs?: number;
  /** What a write waiting for that lock sleeps on between tries (write-lock.ts). @default the system clock */
  readonly clock?: Clock;
  /**
   * 'durable': every commit is fsynced (synchronous = FULL): an acknowledged receipt survives a
   * power cut. 'process': synchronous = NORMAL in WAL: it survives a crash of the process, and
   * the last commits may be lost on power loss (docs/durability.md). @default 'durable'
   */
  readonly durability?: Durability;
}

export interface SqliteStore extends LedgerStore<SqliteTx> {
  readonly table: string;
  /** Where tombstones are kept (see tombstone-row.ts). */
  readonly tombstoneTable: string;
  /** One round of statistics, incremental vacuum and WAL checkpoint, in short turns (sqlite-housekeeping.ts). */
  housekeep(): Promise<SqliteHousekeepingReport>;
  readonly durability: Durability;
  /**
   * Runs `fn` on the read connection: committed rows only, never waiting for a write or a
   * running effect. For GET handlers and listings. Without a read connection (":memory:", a
   * connection given as an object), on the writer between two commits.
   */
  read<T>(fn: (tx: SqliteTx) => T): Promise<T>;
  /** Runs `fn` as one write section, committed (durably) before this resolves: for set-up and small writes of the app. */
  write<T>(fn: (tx: SqliteTx) => T): Promise<T>;
}

export const DEFAULT_SQLITE_STORE_OPTIONS = {
  table: 'oncely_ledger',
  busyTimeoutMs: 5000,
  durability: 'durable',
} as const;

/**
 * The ledger on SQLite (better-sqlite3@12, WAL). One writer connection with group commit
 * (group-commit.ts): claims, renewals and releases are single statements run at once; an effect
 * and its receipt run in a savepoint that begins at the effect's first statement, so nothing holds
 * the writer while a handler awaits before writing; concurrent requests share one COMMIT (one
 * fsync). A second, read-only connection answers lookups and replays from committed rows only.
 * Why each commit is safe, and what each durability mode survives: docs/durability.md.
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with a database');
  const { database } = options;
  if (typeof database !== 'function' && typeof database?.prepare !== 'function') {
    throw new InvalidOptionError(
      'database',
      database,
      'a better-sqlite3 Database or a function returning one',
    );
  }
  const table = checkIdentifier('table', options.table ?? DEFAULT_SQLITE_STORE_OPTIONS.table);
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_STORE_OPTIONS.busyTimeoutMs;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new InvalidOptionError(
      'busyTimeoutMs',
      busyTimeoutMs,
      'a whole number of milliseconds >= 0',
    );
  }
  const clock = options.clock ?? systemClock;
  const durability = options.durability ?? DEFAULT_SQLITE_STORE_OPTIONS.durability;
  if (!DURABILITIES.includes(durability))
    throw new InvalidOptionError('durability', durability, DURABILITIES.join(' or '));

  const ownsConnection = typeof database === 'function';
  let writer: SqliteDatabase | undefined;
  let reader: SqliteDatabase | undefined;
  let closed = false;
  const writerStatements = new Map<string, SqliteStatement>();
  const readerStatements = new Map<string, SqliteStatement>();
  const group = new GroupCommit(connection, () => beginImmediate(connection, clock, busyTimeoutMs));

  const where = 'scope = ? AND key = ? AND token = ? AND state = ?';
  const sql = {
    get: `SELECT * FROM ${table} WHERE scope = ? AND key = ?`,
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} SET ${LEDGER_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
    renew: `UPDATE ${table} SET lease_expires_at = ? WHERE ${where}`,
    remove: `DELETE FROM ${table} WHERE ${where}`,
  };

  function connection(): SqliteDatabase {
    if (closed) throw new StoreClosedError('sqlite');
    if (writer) return writer;
    const opened = typeof database === 'function' ? database() : database;
    const columns = opened.prepare(`PRAGMA table_info(${table})`).all() as Array<{
      name: string;
      type: string;
    }>;
    if (isEarlierSqliteLayout(columns)) {
      if (ownsConnection) opened.close();
      throw new LedgerLayoutError('sqlite', table);
    }
    prepareSqliteFile(opened);
    const wal = opened.pragma('journal_mode = WAL', { simple: true }) === 'wal';
    opened.exec(`PRAGMA synchronous = ${durability === 'durable' ? 'FULL' : 'NORMAL'}`);
    opened.pragma(`busy_timeout = ${busyTimeoutMs}`);
    opened.exec(sqliteLedgerSchema(table));
    // From here on the writer never waits inside SQLite: a batch's BEGIN IMMEDIATE waits for
    // another process's lock in the event loop (write-lock.ts); sweep and housekeeping steps that
    // find the lock taken skip their turn.
    opened.pragma('busy_timeout = 0');
    writer = opened;
    // Only a WAL file lets a reader see committed rows while a write is open; a factory that
    // hands back the same object (or ":memory:", which would be another database) gets none.
    if (wal && typeof database === 'function') {
      const second = database();
      if (second === opened) return opened;
      if (
        typeof second.name === 'string' &&
        typeof opened.name === 'string' &&
        second.name !== opened.name
      ) {
        second.close(); // a factory that opens another file each call: reads stay on the writer
        return opened;
      }
      second.pragma(`busy_timeout = ${busyTimeoutMs}`);
      second.pragma('query_only = true');
      second.pragma(`cache_size = -${READER_CACHE_KIB}`);
      reader = second;
    }
    return opened;
  }

  function prepared(
    cache: Map<string, SqliteStatement>,
    conn: SqliteDatabase,
    source: string,
  ): SqliteStatement {
    let s = cache.get(source);
    if (!s) cache.set(source, (s = conn.prepare(source)));
    return s;
  }
  const onWriter = (source: string): SqliteStatement =>
    prepared(writerStatements, connection(), source);
  const onReader = (source: string): SqliteStatement =>
    reader ? prepared(readerStatements, reader, source) : onWriter(source);
  const tombstones = sqliteTombstones(table, connection, onWriter);
  const readerTombstones = sqliteTombstones(table, () => reader ?? connection(), onReader);
  const sweeper = sqliteSweep(
    {
      ledgerTable: table,
      tombstoneTable: tombstones.table,
      synchronous: durability === 'durable' ? 'FULL' : 'NORMAL',
    },
    connection,
    onWriter,
  );

  /** Runs `fn` on committed rows: on the reader, or on the writer once no batch is open. */
  async function committed<T>(
    fn: (statement: (source: string) => SqliteStatement) => T,
  ): Promise<T> {
    connection();
    if (reader) {
      const conn = reader;
      return fn((source) => prepared(readerStatements, conn, source));
    }
    while (!group.idle)
      await group.settled().then(() => new Promise((resolve) => setImmediate(resolve)));
    return fn(onWriter);
  }

  /**
   * The entry as committed. While the writer is idle (no batch open, no section running or
   * waiting) it holds committed rows only, and it is read there: SQLite drops a connection's whole
   * page cache when it starts reading after another connection committed, so the reader, after
   * every commit, reads the (scope, key) index's root-to-leaf path again (three pread calls more
   * per lookup at 10 M receipts than on an empty file), while the writer's cache, which its own
   * commits keep, still holds that path. Otherwise on the reader, which never waits for a write.
   * Without a read connection it is read on the writer at once: an in-flight row of the open
   * batch is a real claim of this process (a duplicate is told to come back, as on every store),
   * but a receipt is only answered once its batch has committed.
   */
  async function readEntry(
    scope: string,
    key: string,
    onWriter = false,
  ): Promise<LedgerEntry | undefined> {
    const conn = connection();
    const read = (statement: SqliteStatement, graves = tombstones): LedgerEntry | undefined => {
      const row = statement.get(scope, key) as LedgerRow | undefined;
      return row === undefined ? graves.get(scope, key) : rowToEntry(row);
    };
    if (reader && !onWriter) {
      const second = reader;
      const onReader = () => read(prepared(readerStatements, second, sql.get), readerTombstones);
      if (!group.idle) return onReader();
      try {
        return read(prepared(writerStatements, conn, sql.get));
      } catch (error) {
        // The writer runs with busy_timeout = 0: a read there can meet SQLITE_BUSY (another
        // process recovering the WAL) where the reader, with busyTimeoutMs, waits its turn.
        if (isBusy(error)) return onReader();
        throw error;
      }
    }
    let entry = read(prepared(writerStatements, conn, sql.get));
    while (entry !== undefined && entry.state !== 'in_flight' && !group.idle) {
      await group.settled().then(() => new Promise((resolve) => setImmediate(resolve)));
      entry = read(prepared(writerStatements, connection(), sql.get));
    }
    return entry;
  }

  /**
   * A compare-and-swap write. It resolves once committed (a takeover, a release, a purge: rare,
   * and a read after them must see them), except a lease renewal, which only has to reach the
   * writer before the lease ends. A miss waits for the open batch, so a read after it sees why.
   */
  async function swapWrite(source: string, params: unknown[], durable = true): Promise<boolean> {
    const changed = await group.write(() => onWriter(source).run(...params).changes === 1, durable);
    if (!changed) await group.settled();
    return changed;
  }

  const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

  return {
    name: 'sqlite',
    isUnavailable: isSqliteUnavailable,
    table,
    tombstoneTable: tombstones.table,
    durability,
    // A step blocks this process and holds the file's write lock: 500 rows take a few ms, and a
    // step that takes longer than 10 ms (a busy machine) makes the next one smaller.
    sweepBatchRows: 500,
    sweepStepMs: 10,

    // Opening runs the pragmas and creates the table: a bad path fails here, not on a request.
    ready: async () => void connection(),

    sql: sqliteSql,

    get: (scope, key) => readEntry(scope, key),

    async claim(entry) {
      // Committed rows first (on the reader, or on the writer while it is idle): a replay or a
      // duplicate never waits for a write.
      const seen = await readEntry(entry.scope, entry.key);
      if (seen) return { won: false, existing: seen };
      // The claim joins the open batch without waiting for its commit: this process sees it at
      // once, other processes at the commit (they wait for the batch's write lock meanwhile).
      const won = await group.write(
        () => onWriter(sql.insert).run(...entryValues(entry)).changes === 1,
        false,
      );
      if (won) return { won: true };
      // Claimed in the open batch, or by another process: read it on the writer (a receipt only
      // once committed), so a duplicate of a running request is told to come back at once.
      return { won: false, existing: await readEntry(entry.scope, entry.key, true) };
    },

    async swap(expected, next) {
      // A tombstone lives in its own table (tombstone-row.ts): reviving a key is one INSERT; burying
      // one moves a row across tables, in a savepoint of the open batch (sqlite-tombstones.ts).
      if (expected.state === 'expired') return group.write(() => tombstones.revive(next), true);
      if (next.state === 'expired') return group.write(() => tombstones.bury(expected, next), true);
      return swapWrite(sql.swap, [...entryValues(next), ...versionParams(expected)]);
    },

    renew: (expected, leaseExpiresAt) =>
      swapWrite(sql.renew, [leaseExpiresAt, ...versionParams(expected)], false),

    remove: (expected) =>
      expected.state === 'expired'
        ? group.write(() => tombstones.remove(expected), true)
        : swapWrite(sql.remove, versionParams(expected)),

    transaction: (fn) =>
      sqliteTransaction(
        group,
        { statement: onWriter, exec: (source) => void connection().exec(source) },
        fn,
      ),

    complete: async (tx, expected, next) => {
      await tx.begin(); // an effect that wrote nothing begins its section with the receipt
      return tx.run(sql.swap, ...entryValues(next), ...versionParams(expected)).changes === 1;
    },

    // Bounded steps in transactions of their own (sqlite-sweep.ts), between two batches.
    sweep: (nowMs, tombstoneMs, limit = Infinity) =>
      group.outside(() => sweeper.step(nowMs, tombstoneMs, limit)),

    // Counted in chunks on committed rows, requests running in between (sqlite-sweep.ts).
    async backlog(nowMs) {
      let total = 0;
      let cursor: BacklogCursor | undefined;
      do {
        const from = cursor;
        const chunk = await committed((read) =>
          sweeper.countDue(nowMs, from, BACKLOG_CHUNK_ROWS, read),
        );
        total += chunk.count;
        cursor = chunk.next;
        if (cursor) await new Promise((resolve) => setImmediate(resolve));
      } while (cursor);
      return total;
    },

    housekeep: () => housekeepSqlite((fn) => group.outside(fn), connection),

    read: (fn) =>
      committed((statement) =>
        fn({
          begin: async () => {},
          run: (source, ...params) => statement(source).run(...params),
          get: <T>(source: string, ...params: unknown[]) =>
            statement(source).get(...params) as T | undefined,
          all: <T>(source: string, ...params: unknown[]) => statement(source).all(...params) as T[],
          exec: (source) => void (reader ?? connection()).exec(source),
        }),
      ),

    write: (fn) =>
      group.write(
        () =>
          fn({
            begin: async () => {},
            run: (source, ...params) => onWriter(source).run(...params),
            get: <T>(source: string, ...params: unknown[]) =>
              onWriter(source).get(...params) as T | undefined,
            all: <T>(source: string, ...params: unknown[]) =>
              onWriter(source).all(...params) as T[],
            exec: (source) => void connection().exec(source),
          }),
        true,
      ),

    async close() {
      if (closed) return;
      await group.settled();
      closed = true;
      writerStatements.clear();
      readerStatements.clear();
      reader?.close();
      if (ownsConnection && writer) writer.close();
      writer = undefined;
      reader = undefined;
    },
  };
}

/**
 * The read connection's page cache, in KiB (SQLite's `cache_size` as a negative number; the
 * driver's default is 16 MB). SQLite empties a connection's cache whenever it begins a read after
 * another connection committed, and emptying it walks the cache's whole hash table once page
 * numbers are large (pcache1TruncateUnsafe): the reader, used while writes are in flight, does that
 * almost on every lookup, and a table that had grown to 16 MB of pages made a lookup after a
 * commit on a 10 M-receipt file take 18.6 µs instead of 8.8 µs. Between two commits a lookup
 * needs a handful of pages, and the file's interior pages stay in the OS page cache.
 */
export const READER_CACHE_KIB = 2000;

/**
 * Due rows counted per turn of the event loop: well under a millisecond of index walk on a quiet
 * machine. 50,000 (some 3 ms) once held a request for 112 ms on a loaded one, where a process
 * can lose the CPU in the middle of any synchronous section: the shorter each section, the less
 * a request queued behind it waits.
 */
const BACKLOG_CHUNK_ROWS = 10_000;
