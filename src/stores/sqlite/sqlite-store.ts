import { AsyncLocalStorage } from 'node:async_hooks';
import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion } from '../../ledger/ledger-entry.js';
import type { LedgerStore } from '../../ledger/ledger-store.js';
import { AsyncMutex } from '../async-mutex.js';
import { LEDGER_COLUMNS, checkIdentifier, entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { NestedTransactionError, StoreClosedError, TransactionEndedError } from '../store-errors.js';
import { LedgerLayoutError } from '../ledger-layout-error.js';
import type { SqliteDatabase, SqliteStatement, SqliteTx } from './sqlite-database.js';
import { sqliteSql } from './sqlite-sql.js';
import { housekeepSqlite, prepareSqliteFile, type SqliteHousekeepingReport } from './sqlite-housekeeping.js';
import { sqliteSweep } from './sqlite-sweep.js';
import { sqliteTombstoneSchema, sqliteTombstones } from './sqlite-tombstones.js';

export interface SqliteStoreOptions {
  /**
   * A better-sqlite3@12 connection, or a function that opens one on first use. The store closes
   * a connection it opened itself, never one it was given.
   */
  readonly database: SqliteDatabase | (() => SqliteDatabase);
  /** The ledger's table, created if missing. @default 'oncely_ledger' */
  readonly table?: string;
  /** How long a write waits for another process's lock on the file. @default 5000 */
  readonly busyTimeoutMs?: number;
}

export interface SqliteStore extends LedgerStore<SqliteTx> {
  readonly table: string;
  /** Where tombstones are kept (see tombstone-row.ts). */
  readonly tombstoneTable: string;
  /** One bounded round of PRAGMA optimize, incremental vacuum and WAL checkpoint (sqlite-housekeeping.ts). */
  housekeep(): Promise<SqliteHousekeepingReport>;
  /**
   * Runs `fn` on the connection between transactions: for reads outside the ledger (a GET
   * handler) and for the app's own setup. On a shared single connection, any statement run
   * while another request's transaction is open would join that transaction; this waits its turn.
   */
  read<T>(fn: (tx: SqliteTx) => T): Promise<T>;
}

export const DEFAULT_SQLITE_STORE_OPTIONS = { table: 'oncely_ledger', busyTimeoutMs: 5000 } as const;

/**
 * The ledger on SQLite through one better-sqlite3 connection.
 *
 * Durability: WAL. Every transaction (the effect + receipt one included) and `read` commits
 * with `synchronous = FULL`: a COMMIT that returned survives a power cut. The ledger's single-row
 * bookkeeping writes (`insert`, `swap`, `remove`: claim, takeover, release, purge on access; and
 * each bounded `sweep` step)
 * commit with `synchronous = NORMAL`, no fsync: a keyed request pays one fsync, not two. Why:
 *  1. What survives a power cut is a prefix of the commit order, across every connection and
 *     process on the file: recovery replays the WAL up to its last valid frame, and a frame's
 *     checksum chains over all earlier ones (https://www.sqlite.org/fileformat2.html#walformat).
 *     Under NORMAL, checkpoints still sync the WAL before and the database after, and the WAL
 *     header when it is reused (https://www.sqlite.org/pragma.html#pragma_synchronous).
 *  2. A FULL commit fsyncs the WAL before it returns ("an additional sync operation of the WAL
 *     file happens after each transaction commit", same page), and that makes every earlier commit
 *     durable, NORMAL ones included: "a single transaction with PRAGMA synchronous=FULL causes an
 *     fsync() to occur on the WAL file, which makes all prior transactions durable across power
 *     failures or OS crashes" (D. R. Hipp, https://sqlite.org/forum/forumpost/d1a6bc7c4cd2baca).
 *  3. So after a power cut the ledger is in a state it really was in, at or after its last FULL
 *     commit; only NORMAL bookkeeping done since can be lost, which brings back an earlier state:
 *     - a claim (insert or takeover swap): nothing FULL committed after it, so neither did its
 *       effect; the key is new again, or the dead owner's expired lease is back and is taken over
 *       again. A client answered 409 meanwhile just retries.
 *     - a release (remove after an effect that threw, a 5xx, a failed receipt write): the claim
 *       may come back as an in-flight row and block the key until its lease expires (leaseMs, not
 *       retentionMs), as when the release fails because the store is down. Accepted.
 *     - a tombstone or purge on access: the row is past expiresAt and the ledger judges retention
 *       by time, so it is tombstoned or purged again.
 *     - a receipt is never lost: only `complete` writes it, in the effect's transaction, which
 *       commits FULL; `executed` is answered after that COMMIT returned.
 *  4. A NORMAL commit is visible to other processes at once and survives a process crash
 *     ("durable across application crashes regardless of the synchronous setting", pragma page):
 *     the claim still guards the key across processes and across a SIGKILL (the crash test).
 * NORMAL is scoped to the one write: FULL is restored right after it, so the connection (maybe the
 * app's own) stays at FULL between calls, and a durable write re-sends FULL first if that restore
 * failed. The pragma is sent with `exec` between transactions: it acts when compiled (a cached
 * prepared one does not act on re-run) and is refused inside a transaction. Without WAL
 * (":memory:", a file system that refuses it) point 1 does not hold, so nothing is relaxed.
 *
 * Rejected: folding the claim into the effect's transaction (one BEGIN IMMEDIATE … COMMIT). The
 * claim must commit before the effect, on its own (LedgerStore contract): other processes see it,
 * and it survives a worker killed mid-effect (the crash test); folded, that kill leaves nothing,
 * and the store-agnostic ledger's claim/transaction split would change. NORMAL saves the same fsync.
 *
 * The pitfall: better-sqlite3 is synchronous, but an HTTP handler is async. With one
 * connection, `BEGIN; await handler(); COMMIT` lets another request's statements run inside the
 * open transaction. So every use of the connection goes through one async mutex: a transaction
 * holds it from BEGIN to COMMIT, and a claim or a read waits for it. Calling the store from inside
 * its own transaction (which would deadlock) throws a NestedTransactionError instead.
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', options, 'an object with a database');
  const { database } = options;
  if (typeof database !== 'function' && typeof database?.prepare !== 'function') {
    throw new InvalidOptionError('database', database, 'a better-sqlite3 Database or a function returning one');
  }
  const table = checkIdentifier('table', options.table ?? DEFAULT_SQLITE_STORE_OPTIONS.table);
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_STORE_OPTIONS.busyTimeoutMs;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new InvalidOptionError('busyTimeoutMs', busyTimeoutMs, 'a whole number of milliseconds >= 0');
  }

  const mutex = new AsyncMutex();
  const inside = new AsyncLocalStorage<true>();
  const statements = new Map<string, SqliteStatement>();
  const ownsConnection = typeof database === 'function';
  let db: SqliteDatabase | undefined;
  let closed = false;
  /** True once the connection is in WAL mode: only then may bookkeeping commit with NORMAL. */
  let wal = false;
  /** True while the connection may be at NORMAL: from before setting it until FULL is back. */
  let relaxedNow = false;

  const where = 'scope = ? AND key = ? AND token = ? AND state = ?';
  const sql = {
    get: `SELECT * FROM ${table} WHERE scope = ? AND key = ?`,
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} SET ${LEDGER_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
    remove: `DELETE FROM ${table} WHERE ${where}`,
    held: `SELECT 1 FROM ${table} WHERE ${where}`,
  };
  const tombstones = sqliteTombstones(table, connection, statement);
  const sweeper = sqliteSweep({ ledgerTable: table, tombstoneTable: tombstones.table, busyTimeoutMs }, connection, statement);

  function connection(): SqliteDatabase {
    if (closed) throw new StoreClosedError('sqlite');
    if (db) return db;
    const opened = typeof database === 'function' ? database() : database;
    prepareSqliteFile(opened);
    wal = opened.pragma('journal_mode = WAL', { simple: true }) === 'wal';
    opened.exec(SYNCHRONOUS_FULL);
    opened.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const columns = opened.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string; type: string }>;
    if (columns.some((c) => c.name === 'fingerprint' && c.type.toUpperCase() === 'TEXT')) throw new LedgerLayoutError('sqlite', table);
    opened.exec(`CREATE TABLE IF NOT EXISTS ${table} (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint BLOB NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'expired')),
      token TEXT NOT NULL,
      first_seen_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      lease_expires_at INTEGER,
      completed_at INTEGER,
      expired_at INTEGER,
      status INTEGER,
      headers TEXT,
      body BLOB,
      PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at);
    ${sqliteTombstoneSchema(table)}`);
    db = opened;
    return db;
  }

  function statement(source: string): SqliteStatement {
    let s = statements.get(source);
    if (!s) statements.set(source, (s = connection().prepare(source)));
    return s;
  }

  /**
   * A single-row bookkeeping write (claim, takeover, release, purge) committed with NORMAL: no
   * fsync; the next FULL commit makes it durable (see the durability notes above). FULL is put
   * back at once; if even that fails, the next durable write sends it again before it begins.
   */
  function relaxed<T>(write: () => T): T {
    const conn = connection();
    if (!wal) return write();
    relaxedNow = true;
    conn.exec(SYNCHRONOUS_NORMAL);
    try {
      return write();
    } finally {
      try {
        conn.exec(SYNCHRONOUS_FULL);
        relaxedNow = false;
      } catch {
        // Left for durable(): a write that needs FULL never runs until FULL is back.
      }
    }
  }

  /** Before anything that must commit durably: the connection is at FULL, or this throws. */
  function durable(conn: SqliteDatabase): SqliteDatabase {
    if (relaxedNow) {
      conn.exec(SYNCHRONOUS_FULL);
      relaxedNow = false;
    }
    return conn;
  }

  /** Every use of the connection outside a transaction: queued behind any open transaction. */
  function exclusive<T>(method: string, section: () => T | Promise<T>): Promise<T> {
    if (inside.getStore()) return Promise.reject(new NestedTransactionError('sqlite', method));
    return mutex.run(section);
  }

  function handle(): { tx: SqliteTx; end(): void } {
    let active = true;
    const check = (): void => {
      if (!active) throw new TransactionEndedError('sqlite');
    };
    const tx: SqliteTx = {
      run: (source, ...params) => (check(), statement(source).run(...params)),
      get: <T>(source: string, ...params: unknown[]) => (check(), statement(source).get(...params) as T | undefined),
      all: <T>(source: string, ...params: unknown[]) => (check(), statement(source).all(...params) as T[]),
      exec: (source) => {
        check();
        connection().exec(source);
      },
    };
    return { tx, end: () => void (active = false) };
  }

  const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

  return {
    name: 'sqlite',
    table,
    tombstoneTable: tombstones.table,
    // Each step holds the file's write lock: 500 rows take a few ms, shorter than the first
    // sleeps of another process's busy handler (1, 2, 5 ms), which then finds the lock free.
    sweepBatchRows: 500,

    // Opening runs the pragmas and creates the table: a bad path fails here, not on a request.
    ready: () => exclusive('ready', () => void durable(connection())),

    sql: sqliteSql,

    get: (scope, key) =>
      exclusive('get', () => {
        const row = statement(sql.get).get(scope, key) as LedgerRow | undefined;
        return row === undefined ? tombstones.get(scope, key) : rowToEntry(row);
      }),

    insert: (entry) => exclusive('insert', () => relaxed(() => statement(sql.insert).run(...entryValues(entry)).changes === 1)),

    swap: (expected, next) =>
      exclusive('swap', () =>
        relaxed(() => {
          if (expected.state === 'expired') return tombstones.revive(next);
          if (next.state === 'expired') return tombstones.bury(expected, next);
          return statement(sql.swap).run(...entryValues(next), ...versionParams(expected)).changes === 1;
        }),
      ),

    remove: (expected) =>
      exclusive('remove', () =>
        relaxed(() => (expected.state === 'expired' ? tombstones.remove(expected) : statement(sql.remove).run(...versionParams(expected)).changes === 1)),
      ),

    transaction(fn) {
      return exclusive('transaction', async () => {
        const conn = durable(connection()); // the effect + receipt commit: FULL, always
        // IMMEDIATE takes the write lock now, so the receipt write cannot fail with SQLITE_BUSY
        // after the effect already ran (another process sharing the file waits instead).
        conn.exec('BEGIN IMMEDIATE');
        const { tx, end } = handle();
        try {
          const result = await inside.run(true, () => fn(tx));
          end();
          conn.exec('COMMIT');
          return result;
        } catch (error) {
          end();
          rollBack(conn);
          throw error;
        }
      });
    },

    // The open IMMEDIATE transaction already excludes every other writer, in this process (the
    // mutex) and in others (the file lock): checking the row is enough to keep it.
    hold: async (tx, expected) => tx.get(sql.held, ...versionParams(expected)) !== undefined,

    complete: async (tx, expected, next) => tx.run(sql.swap, ...entryValues(next), ...versionParams(expected)).changes === 1,

    // Bookkeeping like a purge on access, so NORMAL too: a lost step is redone by the next sweep
    // (retention is judged by time), and without an fsync a step holds the write lock for less.
    sweep: (nowMs, tombstoneMs, limit = Infinity) => exclusive('sweep', () => relaxed(() => sweeper.step(nowMs, tombstoneMs, limit))),

    backlog: (nowMs) => exclusive('backlog', () => sweeper.backlog(nowMs)),

    housekeep: () => exclusive('housekeep', () => housekeepSqlite(durable(connection()), busyTimeoutMs)),

    read: (fn) =>
      exclusive('read', () => {
        durable(connection()); // the pragmas and the ledger table come first; the app's writes commit FULL
        const { tx, end } = handle();
        try {
          return fn(tx);
        } finally {
          end();
        }
      }),

    close: () =>
      exclusive('close', () => {
        if (closed) return;
        closed = true;
        statements.clear();
        if (ownsConnection && db) db.close();
        db = undefined;
      }),
  };
}

/** Sent with exec, never as a cached prepared statement: a pragma acts when it is compiled. */
const SYNCHRONOUS_FULL = 'PRAGMA synchronous = FULL';
const SYNCHRONOUS_NORMAL = 'PRAGMA synchronous = NORMAL';

/** Rolls back if a transaction is open. A failing ROLLBACK must not hide the error that caused it. */
function rollBack(conn: SqliteDatabase): void {
  try {
    if (conn.inTransaction) conn.exec('ROLLBACK');
  } catch {
    // SQLite already rolled back on its own (e.g. after SQLITE_FULL); nothing is left open.
  }
}
