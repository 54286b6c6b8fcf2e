import { LedgerLayoutError } from '../ledger-layout-error.js';
import { StoreClosedError } from '../../store-errors.js';
import type { SqliteDatabase, SqliteStatement } from '../../sqlite-driver/sqlite-database.js';
import { prepareSqliteFile } from './sqlite-housekeeping.js';
import { isEarlierSqliteLayout, sqliteLedgerSchema } from './sqlite-ledger-schema.js';
import type { ResolvedSqliteStoreOptions } from './sqlite-store-options.js';

/**
 * The store's connections: the writer, opened (and the table set up) at first use, and, for a
 * WAL file opened by a factory, a read-only second connection; each with its prepared
 * statements. Closes what it opened.
 */
export interface SqliteConnections {
  /** The writer (opening it the first time); throws StoreClosedError once closed. */
  connection(): SqliteDatabase;
  /** The read connection, if there is one (after the writer opened). */
  reader(): SqliteDatabase | undefined;
  /** `source` prepared on the writer, once. */
  onWriter(source: string): SqliteStatement;
  /** `source` prepared on the reader, once; on the writer without a reader. */
  onReader(source: string): SqliteStatement;
  close(): void;
}

export function sqliteConnections(o: ResolvedSqliteStoreOptions): SqliteConnections {
  const { database, table, busyTimeoutMs, durability } = o;
  const ownsConnection = typeof database === 'function';
  let writer: SqliteDatabase | undefined;
  let reader: SqliteDatabase | undefined;
  let closed = false;
  const writerStatements = new Map<string, SqliteStatement>();
  const readerStatements = new Map<string, SqliteStatement>();

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

  return {
    connection,
    reader: () => reader,
    onWriter,
    onReader,
    close() {
      if (closed) return;
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
