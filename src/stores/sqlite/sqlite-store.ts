import type { EntryVersion } from '../../ledger/ledger-entry.js';
import { COMPLETE_COLUMNS, LEDGER_COLUMNS, completeValues, entryValues } from '../ledger-row.js';
import { GroupCommit } from './group-commit.js';
import { sqliteConnections, type SqliteConnections } from './sqlite-connections.js';
import type { SqliteTx } from './sqlite-database.js';
import { housekeepSqlite } from './sqlite-housekeeping.js';
import { sqliteReads, type SqliteReads } from './sqlite-reads.js';
import { sqliteSql } from './sqlite-sql.js';
import {
  resolveSqliteStoreOptions,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store-options.js';
import { sqliteSweep, type BacklogCursor } from './sqlite-sweep.js';
import { sqliteTombstones } from './sqlite-tombstones.js';
import { sqliteTransaction } from './sqlite-transaction.js';
import { beginImmediate } from './write-lock.js';

export {
  DEFAULT_SQLITE_STORE_OPTIONS,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store-options.js';
import { isSqliteUnavailable } from './sqlite-unavailable.js';
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
  const conns = sqliteConnections(o);
  const { connection, onWriter } = conns;
  const group = new GroupCommit(connection, onWriter, () =>
    beginImmediate(connection, o.clock, o.busyTimeoutMs),
  );
  const where = 'scope = ? AND key = ? AND token = ? AND state = ?';
  const sql = {
    get: `SELECT * FROM ${table} WHERE scope = ? AND key = ?`,
    insert: `INSERT INTO ${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (scope, key) DO NOTHING`,
    swap: `UPDATE ${table} SET ${LEDGER_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
    renew: `UPDATE ${table} SET lease_expires_at = ? WHERE ${where}`,
    remove: `DELETE FROM ${table} WHERE ${where}`,
    // The receipt in place of the in-flight row: only the columns that change. Setting the key
    // columns too (to the same values) made SQLite rewrite the row in the primary key's tree
    // and the expiry index as a delete and an insert: 22 µs a request in bench/anchors, now 8.
    complete: `UPDATE ${table} SET ${COMPLETE_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`,
  };
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
  const sweeper = sqliteSweep(
    {
      ledgerTable: table,
      tombstoneTable: tombstones.table,
      synchronous: durability === 'durable' ? 'FULL' : 'NORMAL',
    },
    connection,
    onWriter,
  );

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
    isUnavailable: isSqliteUnavailable,
    table,
    tombstoneTable: tombstones.table,
    durability,
    // A step blocks this process and holds the file's write lock: 500 rows take a few ms, and a
    // step that takes longer than 10 ms (a busy machine) makes the next one smaller.
    tuning: { sweepBatchRows: 500, sweepStepMs: 10 },
    // Opening runs the pragmas and creates the table: a bad path fails here, not on a request.
    ready: async () => void connection(),
    sql: sqliteSql,
    get: (scope, key) => reads.readEntry(scope, key),

    async claim(entry) {
      // Committed rows first (on the reader, or on the writer while it is idle): a replay or a
      // duplicate never waits for a write. The live table only: a tombstone would only be taken
      // over (decide-claim.ts: the key is new again, revived by the same INSERT as below), so
      // looking for one cost a new key a second SELECT for nothing.
      const seen = await reads.readEntry(entry.scope, entry.key, { liveOnly: true });
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
      return {
        won: false,
        existing: await reads.readEntry(entry.scope, entry.key, { onWriter: true }),
      };
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
      return (
        tx.run(sql.complete, ...completeValues(next), ...versionParams(expected)).changes === 1
      );
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

const versionParams = (v: EntryVersion): unknown[] => [v.scope, v.key, v.token, v.state];

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
