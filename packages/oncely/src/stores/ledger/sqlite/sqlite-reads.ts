import type { LedgerEntry } from '../../../ledger/ledger-entry.js';
import { rowToEntry, type LedgerRow } from '../ledger-row.js';
import type { GroupCommit } from './group-commit.js';
import type { SqliteConnections } from './sqlite-connections.js';
import type { SqliteStatement, SqliteTx } from '../../sqlite-driver/sqlite-database.js';
import type { sqliteTombstones } from './sqlite-tombstones.js';
import { isBusy } from '../../sqlite-driver/write-lock.js';

type Tombstones = ReturnType<typeof sqliteTombstones>;

/** The store's reads: entries, and committed rows for the app, never waiting for a write. */
export interface SqliteReads {
  /**
   * The entry for (scope, key) (see the function's comment). `onWriter`: the writer's view;
   * `liveOnly`: the live table only, no tombstone (a claim's first look, see sqlite-store.ts).
   */
  readEntry(scope: string, key: string, how?: EntryRead): Promise<LedgerEntry | undefined>;
  /** Runs `fn` on committed rows: on the reader, or on the writer once no batch is open. */
  committed<T>(fn: (statement: (source: string) => SqliteStatement) => T): Promise<T>;
  /** The app's read on committed rows (SqliteStore.read). */
  read<T>(fn: (tx: SqliteTx) => T): Promise<T>;
}

export interface EntryRead {
  readonly onWriter?: boolean;
  readonly liveOnly?: boolean;
}

export function sqliteReads(
  conns: SqliteConnections,
  group: GroupCommit,
  getSql: string,
  tombstones: { readonly writer: Tombstones; readonly reader: Tombstones },
): SqliteReads {
  const batchSettled = () =>
    group.settled().then(() => new Promise((resolve) => setImmediate(resolve)));

  async function committed<T>(fn: (statement: (source: string) => SqliteStatement) => T) {
    conns.connection();
    if (conns.reader()) return fn(conns.onReader);
    while (!group.idle) await batchSettled();
    return fn(conns.onWriter);
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
  async function readEntry(scope: string, key: string, how: EntryRead = {}) {
    const { onWriter = false, liveOnly = false } = how;
    conns.connection();
    const read = (statement: SqliteStatement, graves: Tombstones): LedgerEntry | undefined => {
      const row = statement.get(scope, key) as LedgerRow | undefined;
      if (row !== undefined) return rowToEntry(row);
      return liveOnly ? undefined : graves.get(scope, key);
    };
    const fromWriter = () => read(conns.onWriter(getSql), tombstones.writer);
    if (conns.reader() && !onWriter) {
      const fromReader = () => read(conns.onReader(getSql), tombstones.reader);
      if (!group.idle) return fromReader();
      try {
        return fromWriter();
      } catch (error) {
        // The writer runs with busy_timeout = 0: a read there can meet SQLITE_BUSY (another
        // process recovering the WAL) where the reader, with busyTimeoutMs, waits its turn.
        if (isBusy(error)) return fromReader();
        throw error;
      }
    }
    let entry = fromWriter();
    while (entry !== undefined && entry.state !== 'in_flight' && !group.idle) {
      await batchSettled();
      entry = fromWriter();
    }
    return entry;
  }

  return {
    readEntry,
    committed,
    read: (fn) =>
      committed((statement) =>
        fn({
          begin: async () => {},
          run: (source, ...params) => statement(source).run(...params),
          get: <T>(source: string, ...params: unknown[]) =>
            statement(source).get(...params) as T | undefined,
          all: <T>(source: string, ...params: unknown[]) => statement(source).all(...params) as T[],
          exec: (source) => void (conns.reader() ?? conns.connection()).exec(source),
        }),
      ),
  };
}
