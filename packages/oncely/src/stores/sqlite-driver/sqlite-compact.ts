import type { SqliteDatabase } from './sqlite-database.js';

/** How far a compaction has come, for a progress line. */
export interface CompactProgress {
  /** 'incremental': free pages handed back a step at a time; 'full': VACUUM rewriting the file. */
  readonly mode: 'incremental' | 'full';
  readonly pagesFreed: number;
  /** Free pages there were when it started (for the full mode: the whole file is rewritten). */
  readonly pagesToFree: number;
}

export interface CompactReport {
  readonly mode: 'incremental' | 'full';
  readonly bytesBefore: number;
  readonly bytesAfter: number;
  readonly pagesFreed: number;
}

/** Pages handed back per step: 16 MiB of 4 KiB pages, a transaction of some hundred ms. */
export const COMPACT_PAGES_PER_STEP = 4096;

/**
 * Gives a SQLite ledger file's free pages back to the file system (docs/ledger.md, "Sizing").
 * A file in auto_vacuum = INCREMENTAL mode (every file the store made) is compacted in steps:
 * `PRAGMA incremental_vacuum(N)` in a write transaction of its own (waiting for the write lock as
 * long as the connection's busy_timeout), so a server on the file goes on between two steps. A file made
 * before (auto_vacuum NONE), or `full`, gets one VACUUM: the whole file is rewritten into
 * INCREMENTAL mode, under a lock that keeps every other writer out while it runs, so stop the
 * server first. Either way the WAL is checkpointed and truncated at the end.
 * https://www.sqlite.org/pragma.html#pragma_incremental_vacuum, https://www.sqlite.org/lang_vacuum.html
 */
export async function compactSqliteFile(
  db: SqliteDatabase,
  options: {
    readonly full?: boolean;
    readonly onProgress?: (progress: CompactProgress) => void;
    /** Awaited between two steps: a pause lets a server on the file write meanwhile. */
    readonly between?: () => Promise<void>;
  } = {},
): Promise<CompactReport> {
  const pragma = (source: string): number => Number(db.pragma(source, { simple: true }));
  const fileBytes = (): number => pragma('page_count') * pragma('page_size');
  const bytesBefore = fileBytes();
  const free = pragma('freelist_count');
  const incremental = pragma('auto_vacuum') === 2;
  const between = options.between ?? (() => Promise.resolve());

  if (options.full || !incremental) {
    options.onProgress?.({ mode: 'full', pagesFreed: 0, pagesToFree: free });
    // Set before VACUUM, the mode takes effect as it rewrites the file.
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
    options.onProgress?.({ mode: 'full', pagesFreed: free, pagesToFree: free });
    return { mode: 'full', bytesBefore, bytesAfter: fileBytes(), pagesFreed: free };
  }

  let pagesFreed = 0;
  for (let left = free; left > 0; left = pragma('freelist_count')) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.pragma(`incremental_vacuum(${COMPACT_PAGES_PER_STEP})`);
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
    const freed = left - pragma('freelist_count');
    if (freed <= 0) break; // nothing more to hand back (another writer is freeing pages as fast)
    pagesFreed += freed;
    options.onProgress?.({ mode: 'incremental', pagesFreed, pagesToFree: free });
    await between();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { mode: 'incremental', bytesBefore, bytesAfter: fileBytes(), pagesFreed };
}
