import type { LedgerEntry } from '../../../ledger/ledger-entry.js';
import { entryValues } from '../ledger-row.js';
import { GroupCommit } from './group-commit.js';
import { PendingClaims } from './pending-claims.js';
import {
  claimInOpenBatch,
  ledgerStatements,
  receiptWrite,
  versionParams,
} from './sqlite-claims.js';
import { sqliteConnections, type SqliteConnections } from './sqlite-connections.js';
import type { SqliteTx } from '../../sqlite-driver/sqlite-database.js';
import { housekeepSqlite } from './sqlite-housekeeping.js';
import { sqliteReads, type SqliteReads } from './sqlite-reads.js';
import { allNow, sqliteSql } from '../../sqlite-driver/sqlite-sql.js';
import {
  resolveSqliteStoreOptions,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store-options.js';
import { sqliteSweep, type BacklogCursor } from './sqlite-sweep.js';
import { sqliteTombstones } from './sqlite-tombstones.js';
import { holdsWriter, sqliteTransaction } from './sqlite-transaction.js';
import { beginImmediate } from '../../sqlite-driver/write-lock.js';

export {
  DEFAULT_SQLITE_STORE_OPTIONS,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store-options.js';
import { isSqliteUnavailable } from '../../sqlite-driver/sqlite-unavailable.js';
import { StoreClosedError } from '../../store-errors.js';
export { READER_CACHE_KIB } from './sqlite-connections.js';

/**
 * The ledger on SQLite (better-sqlite3@12, WAL). One writer connection with group commit
 * (group-commit.ts): claims, renewals and releases are single statements run at once; an effect
 * and its receipt run in a savepoint that begins at the effect's first statement, so nothing holds
 * the writer while a handler awaits before writing; concurrent requests share one COMMIT (one
 * fsync). A second, read-only connection answers lookups and replays from committed rows only.
 * Why each commit is safe, and what each durability mode survives: docs/durability.md.
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const o = resolveSqliteStoreOptions(options);
  const { table, durability } = o;
  const { conns, tombstones, claimParts, sweeper } = sqliteStoreParts(o);
  const { connection } = conns;
  const { group, claims, reads, onWriter, sql } = claimParts;

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

  return {
    name: 'sqlite',
    isUnavailable: isClosedOrUnavailable,
    table,
    tombstoneTable: tombstones.table,
    durability,
    capabilities: {
      deferredCommit: undefined,
      // Into the open batch, beside the claims and receipts of this turn: one COMMIT for all.
      commitAlone: (source, params) =>
        group.write(() => allNow<Record<string, unknown>>(writerTx(conns), source, params), true),
      // A begun transaction holds the one writer until it ends: a step after it would wait forever.
      holdsWriter,
    },
    // A step blocks this process and holds the file's write lock: 500 rows take a few ms, and a
    // step that takes longer than 10 ms (a busy machine) makes the next one smaller.
    tuning: { sweepBatchRows: 500, sweepStepMs: 10 },
    // Opening runs the pragmas and creates the table: a bad path fails here, not on a request.
    ready: async () => void connection(),
    sql: sqliteSql,
    get: (scope, key) => reads.readEntry(scope, key),

    claim: (entry) => claimInOpenBatch(entry, claimParts),

    async swap(expected, next) {
      if (expected.state === 'in_flight') await group.write(() => claims.writeRow(expected), false);
      // A tombstone lives in its own table (tombstone-row.ts): reviving a key is one INSERT; burying
      // one moves a row across tables, in a savepoint of the open batch (sqlite-tombstones.ts).
      if (expected.state === 'expired') return group.write(() => tombstones.revive(next), true);
      if (next.state === 'expired') return group.write(() => tombstones.bury(expected, next), true);
      return swapWrite(sql.swap, [...entryValues(next), ...versionParams(expected)]);
    },

    renew: async (expected, leaseExpiresAt) =>
      claims.renew(expected, leaseExpiresAt) ||
      swapWrite(sql.renew, [leaseExpiresAt, ...versionParams(expected)], false),

    remove: async (expected) => {
      if (expected.state === 'expired') return group.write(() => tombstones.remove(expected), true);
      if (claims.release(expected)) return true; // never written: nothing to delete
      return swapWrite(sql.remove, versionParams(expected));
    },

    transaction: (fn) =>
      sqliteTransaction(
        group,
        { statement: onWriter, exec: (source) => void connection().exec(source) },
        fn,
      ),

    complete: async (tx, expected, next) => {
      await tx.begin(); // an effect that wrote nothing begins its section with the receipt
      const how = claims.complete(expected, group.openBatch, next);
      if (how === 'deferred') return true; // written with its batch, just before COMMIT
      const write = receiptWrite(sql, how, expected, next);
      return write === undefined ? false : tx.run(write.source, ...write.params).changes === 1;
    },

    // Bounded steps in transactions of their own (sqlite-sweep.ts), between two batches.
    sweep: (nowMs, tombstoneMs, limit = Infinity) =>
      group.outside(() => sweeper.step(nowMs, tombstoneMs, limit)),

    // Counted in chunks on committed rows, requests running in between (sqlite-sweep.ts).
    backlog: (nowMs) => countBacklog(reads, sweeper, nowMs),

    housekeep: () => housekeepSqlite((fn) => group.outside(fn), connection),
    read: reads.read,
    write: (fn) => group.write(() => fn(writerTx(conns)), true),
    async close() {
      await group.settled();
      conns.close();
    },
  };
}

/**
 * The store's working parts over its two connections: the writer's group commit with the claims
 * it writes just before COMMIT and the reads (writer or reader), in `claimParts`, which claiming
 * needs (sqlite-claims.ts); the tombstones; the sweep.
 */
function sqliteStoreParts(o: ReturnType<typeof resolveSqliteStoreOptions>) {
  const { table, durability } = o;
  const conns = sqliteConnections(o);
  const { connection, onWriter } = conns;
  const sql = ledgerStatements(table);
  const insertRow = (entry: LedgerEntry) => onWriter(sql.insert).run(...entryValues(entry)).changes;
  const claims = new PendingClaims({ inFlight: insertRow, receipt: insertRow });
  const group = new GroupCommit(
    connection,
    onWriter,
    () => beginImmediate(connection, o.clock, o.busyTimeoutMs),
    {
      beforeCommit: () => claims.writeBeforeCommit(),
      dropped: () => claims.dropUnwritten(),
      sectionEnded: (kept) => claims.sectionEnded(kept),
    },
  );
  const tombstones = sqliteTombstones(table, connection, onWriter);
  const readerTombstones = sqliteTombstones(
    table,
    () => conns.reader() ?? connection(),
    conns.onReader,
  );
  const reads = sqliteReads(conns, group, sql.get, {
    writer: tombstones,
    reader: readerTombstones,
  });
  const claimParts = { group, claims, reads, onWriter, sql };
  const sweeper = sqliteSweep(
    {
      ledgerTable: table,
      tombstoneTable: tombstones.table,
      synchronous: durability === 'durable' ? 'FULL' : 'NORMAL',
    },
    connection,
    onWriter,
  );
  return { conns, tombstones, claimParts, sweeper };
}

/** The due rows, counted in chunks on committed rows with requests running in between. */
async function countBacklog(
  reads: SqliteReads,
  sweeper: ReturnType<typeof sqliteSweep>,
  nowMs: number,
): Promise<number> {
  let total = 0;
  let cursor: BacklogCursor | undefined;
  do {
    const from = cursor;
    const chunk = await reads.committed((read) =>
      sweeper.countDue(nowMs, from, BACKLOG_CHUNK_ROWS, read),
    );
    total += chunk.count;
    cursor = chunk.next;
    if (cursor) await new Promise((resolve) => setImmediate(resolve));
  } while (cursor);
  return total;
}

/** The app's transaction handle over the writer, inside one write section (SqliteStore.write). */
function writerTx({ onWriter, connection }: SqliteConnections): SqliteTx {
  return {
    begin: async () => {},
    run: (source, ...params) => onWriter(source).run(...params),
    get: <T>(source: string, ...params: unknown[]) =>
      onWriter(source).get(...params) as T | undefined,
    all: <T>(source: string, ...params: unknown[]) => onWriter(source).all(...params) as T[],
    exec: (source) => void connection().exec(source),
  };
}

/**
 * Due rows counted per turn of the event loop: well under a millisecond of index walk on a quiet
 * machine. 50,000 (some 3 ms) once held a request for 112 ms on a loaded one, where a process
 * can lose the CPU in the middle of any synchronous section: the shorter each section, the less
 * a request queued behind it waits.
 */
const BACKLOG_CHUNK_ROWS = 10_000;

/**
 * An effect's statement that failed because the database did, or because the store was closed
 * before it wrote: its transaction takes the writer at its first statement, so a store closed
 * while the handler still worked (a server shutting down) is met there. Either way the request
 * was not served and may be retried: 503 + Retry-After, not the effect's own failure (500).
 */
function isClosedOrUnavailable(error: unknown): boolean {
  return error instanceof StoreClosedError || isSqliteUnavailable(error);
}
