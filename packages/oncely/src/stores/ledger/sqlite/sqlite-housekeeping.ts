import type { SqliteDatabase } from '../../sqlite-driver/sqlite-database.js';
import { commitOrRollBack, tryBeginImmediate } from '../../sqlite-driver/write-lock.js';

/** What one round of housekeeping did, for logs and the store view. */
export interface SqliteHousekeepingReport {
  /** Pages handed back to the file system by incremental vacuum (0 when auto_vacuum is off). */
  readonly pagesFreed: number;
  /** Pages still free inside the file after the round. */
  readonly freePagesLeft: number;
  /** WAL frames after the checkpoint (0 when it could copy and reset everything). */
  readonly walFramesLeft: number;
}

/**
 * Pragmas a fresh ledger file gets before its first table (auto_vacuum can only be chosen then;
 * an existing file keeps its mode until a full VACUUM, see docs/ledger.md "Sizing"):
 * - auto_vacuum = INCREMENTAL: pages freed by sweeps can be returned with incremental_vacuum,
 *   a few at a time, instead of a full VACUUM that rewrites the file under an exclusive lock;
 * - journal_size_limit: after a checkpoint resets the WAL, its file is truncated to this size,
 *   so one burst of writes does not leave a WAL of gigabytes on disk for good.
 * https://www.sqlite.org/pragma.html#pragma_auto_vacuum, #pragma_journal_size_limit
 */
export function prepareSqliteFile(db: SqliteDatabase): void {
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  // ANALYZE reads at most this many rows per index (approximate statistics): after a sweep of a
  // million rows, PRAGMA optimize then takes milliseconds, not the second a full ANALYZE takes
  // (https://www.sqlite.org/lang_analyze.html#approx).
  db.pragma(`analysis_limit = ${ANALYSIS_LIMIT_ROWS}`);
  // Reads through a memory map instead of read() calls into SQLite's small page cache (2 MB by
  // default): a replay of a random key among millions touches a few B-tree pages that are mostly
  // in the OS page cache already, and a map makes each of those a memory access, not a syscall
  // (https://www.sqlite.org/mmap.html). Address space only; the OS decides what stays in memory.
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
}

/** 1 GiB of address space for the map: a ledger of some 4 million receipts fits in it whole. */
export const MMAP_BYTES = 1024 * 1024 * 1024;

export const ANALYSIS_LIMIT_ROWS = 1000;

/** 64 MiB: room for the WAL of many sweep steps between two checkpoints. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** Pages returned per round (2 MiB of 4 KiB pages, some 20 ms): free pages are reused by new receipts first anyway. */
export const VACUUM_PAGES_PER_STEP = 512;

/** Runs `fn` on the writer in a turn of its own, after the writes already waiting for it. */
export type WriterTurn = <T>(fn: () => T) => Promise<T>;

/**
 * One round of housekeeping, run after a sweep, in short turns on the writer (like the sweep's
 * steps) so that a write waits for one of them at most, not for the whole round:
 * - the ANALYZE statements `PRAGMA optimize` would run now (its 0x01 bit lists them instead of
 *   running them), one table per turn, each bounded by analysis_limit: the planner's statistics
 *   where they went stale (https://www.sqlite.org/pragma.html#pragma_optimize). Run in one
 *   block, PRAGMA optimize took 70 ms after a sweep of half a million receipts;
 * - PRAGMA incremental_vacuum(N): frees at most N pages from the end of the file;
 * - PRAGMA wal_checkpoint(PASSIVE): copies what it can of the WAL into the database without
 *   waiting for anyone; once all of it is copied, the next writer starts the WAL over and
 *   journal_size_limit truncates its file (https://www.sqlite.org/wal.html#ckpt).
 * The statistics and the vacuum need the write lock: when another process holds it, the round
 * skips them.
 */
export async function housekeepSqlite(
  turn: WriterTurn,
  db: () => SqliteDatabase,
  maxPages = VACUUM_PAGES_PER_STEP,
): Promise<SqliteHousekeepingReport> {
  const analyses = await turn(() => staleStatistics(db()));
  for (const statement of analyses) await turn(() => writeIfFree(db(), statement));
  const { before, after } = await turn(() => vacuumStep(db(), maxPages));
  const walFramesLeft = await turn(() => checkpointStep(db()));
  return { pagesFreed: before - after, freePagesLeft: after, walFramesLeft };
}

/**
 * What PRAGMA optimize would ANALYZE now (without running it), one index per statement: a
 * table's indexes are analysed one by one, so the ledger's table (70 ms as one ANALYZE after a
 * sweep of half a million) takes several shorter turns.
 */
function staleStatistics(db: SqliteDatabase): string[] {
  const rows = db.prepare('PRAGMA optimize(0x03)').all() as Array<Record<string, unknown>>;
  return rows.flatMap((row) => {
    const statement = String(Object.values(row)[0]);
    const target = /^ANALYZE ("(?:[^"]|"")+")\.("(?:[^"]|"")+")$/i.exec(statement);
    if (!target) return /^ANALYZE /i.test(statement) ? [statement] : [];
    const [, schema, table] = target as unknown as [string, string, string];
    const indexes = db
      .prepare(`SELECT name FROM ${schema}.pragma_index_list(?)`)
      .all(unquote(table)) as Array<{ name: string }>;
    if (indexes.length === 0) return [statement];
    return indexes.map(({ name }) => `ANALYZE ${schema}."${name.replaceAll('"', '""')}"`);
  });
}

function unquote(identifier: string): string {
  return identifier.slice(1, -1).replaceAll('""', '"');
}

function vacuumStep(db: SqliteDatabase, maxPages: number): { before: number; after: number } {
  const before = Number(db.pragma('freelist_count', { simple: true }));
  if (before > 0) writeIfFree(db, `PRAGMA incremental_vacuum(${maxPages})`);
  return { before, after: Number(db.pragma('freelist_count', { simple: true })) };
}

/**
 * Runs `source` in a write transaction of its own if the write lock is free now; skipped when
 * another process holds it (the next round does it): housekeeping never makes a write wait.
 */
function writeIfFree(db: SqliteDatabase, source: string): void {
  if (tryBeginImmediate(db)) commitOrRollBack(db, () => db.exec(source));
}

/** WAL frames left after a PASSIVE checkpoint (0 when it could copy and reset everything). */
function checkpointStep(db: SqliteDatabase): number {
  const checkpoint = db.pragma('wal_checkpoint(PASSIVE)') as Array<{
    busy: number;
    log: number;
    checkpointed: number;
  }>;
  const row = checkpoint[0];
  return row === undefined || row.log < 0 ? 0 : row.log - row.checkpointed;
}
