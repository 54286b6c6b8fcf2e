import { AsyncLocalStorage } from 'node:async_hooks';
import { InvalidOptionError } from '../../contract/errors.js';
import type { EntryVersion } from '../../ledger/ledger-entry.js';
import type { LedgerStore } from '../../ledger/ledger-store.js';
import { AsyncMutex } from '../async-mutex.js';
import { LEDGER_COLUMNS, checkIdentifier, entryValues, rowToEntry, type LedgerRow } from '../ledger-row.js';
import { NestedTransactionError, StoreClosedError, TransactionEndedError } from '../store-errors.js';
import type { SqliteDatabase, SqliteStatement, SqliteTx } from './sqlite-database.js';

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
 * Durability: WAL with `synchronous = FULL`, so a COMMIT that returned survives a power cut, not
 * only a process kill (SQLite's docs: in WAL mode NORMAL may lose the last transactions).
 *
 * The pitfall of issue 4: better-sqlite3 is synchronous, but an HTTP handler is async. With one
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

  const where = 'scope = ? AND key = ? AND token = ? AND state = ?';
  const sql = {
    get: `SELECT * FROM ${table} WHERE scope = ? AND key = ?`,
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} SET ${LEDGER_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
    remove: `DELETE FROM ${table} WHERE ${where}`,
    held: `SELECT 1 FROM ${table} WHERE ${where}`,
    tombstone: `UPDATE ${table} SET state = 'expired', expired_at = expires_at, expires_at = expires_at + ?, lease_expires_at = NULL, status = NULL, headers = NULL, body = NULL WHERE state <> 'expired' AND expires_at <= ?`,
    purge: `DELETE FROM ${table} WHERE state = 'expired' AND expires_at <= ?`,
  };

  function connection(): SqliteDatabase {
    if (closed) throw new StoreClosedError('sqlite');
    if (db) return db;
    const opened = typeof database === 'function' ? database() : database;
    opened.pragma('journal_mode = WAL');
    opened.pragma('synchronous = FULL');
    opened.pragma(`busy_timeout = ${busyTimeoutMs}`);
    opened.exec(`CREATE TABLE IF NOT EXISTS ${table} (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
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
    );
    CREATE INDEX IF NOT EXISTS ${table}_expires_at ON ${table} (expires_at);`);
    db = opened;
    return db;
  }

  function statement(source: string): SqliteStatement {
    let s = statements.get(source);
    if (!s) statements.set(source, (s = connection().prepare(source)));
    return s;
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

    get: (scope, key) =>
      exclusive('get', () => {
        const row = statement(sql.get).get(scope, key) as LedgerRow | undefined;
        return row === undefined ? undefined : rowToEntry(row);
      }),

    insert: (entry) => exclusive('insert', () => statement(sql.insert).run(...entryValues(entry)).changes === 1),

    swap: (expected, next) =>
      exclusive('swap', () => statement(sql.swap).run(...entryValues(next), ...versionParams(expected)).changes === 1),

    remove: (expected) => exclusive('remove', () => statement(sql.remove).run(...versionParams(expected)).changes === 1),

    transaction(fn) {
      return exclusive('transaction', async () => {
        const conn = connection();
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

    sweep: (nowMs, tombstoneMs) =>
      exclusive('sweep', () => {
        const conn = connection();
        conn.exec('BEGIN IMMEDIATE');
        try {
          const tombstoned = statement(sql.tombstone).run(tombstoneMs, nowMs).changes;
          const deleted = statement(sql.purge).run(nowMs).changes;
          conn.exec('COMMIT');
          return { tombstoned, deleted };
        } catch (error) {
          rollBack(conn);
          throw error;
        }
      }),

    read: (fn) =>
      exclusive('read', () => {
        connection(); // the pragmas and the ledger table come first, whatever fn does
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

/** Rolls back if a transaction is open. A failing ROLLBACK must not hide the error that caused it. */
function rollBack(conn: SqliteDatabase): void {
  try {
    if (conn.inTransaction) conn.exec('ROLLBACK');
  } catch {
    // SQLite already rolled back on its own (e.g. after SQLITE_FULL); nothing is left open.
  }
}
