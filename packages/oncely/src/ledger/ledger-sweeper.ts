import type { Clock } from '../time/clock.js';
import type { LedgerStore, SweepResult } from './ledger-store.js';

/** What a sweep has done and has left: for the store view, logs and metrics gauges. */
export interface SweepProgress {
  /** True while a sweep is under way. */
  readonly running: boolean;
  /**
   * Entries and tombstones still due, as counted when the sweep started minus what it has handled
   * since (0 once it finished). New rows falling due meanwhile are left for the next sweep.
   */
  readonly rowsLeft: number;
  /** Of the current (or last) sweep: entries tombstoned, tombstones deleted, bounded steps taken. */
  readonly tombstoned: number;
  readonly deleted: number;
  readonly batches: number;
  /** When the current (or last) sweep started and finished, on the ledger's clock; null before. */
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  /** True when the last sweep was stopped before it had handled everything due. */
  readonly interrupted: boolean;
}

export interface LedgerSweeperOptions {
  readonly store: Pick<LedgerStore<unknown>, 'sweep' | 'backlog' | 'housekeep'>;
  /** "Due" is judged against this clock's now() at the start of a sweep; pauses sleep on it. */
  readonly clock: Clock;
  readonly tombstoneMs: number;
  /** The most rows one bounded step (one short transaction) handles. */
  readonly batchRows: number;
  /**
   * The time a step aims at: a step that took longer makes the next one proportionally smaller
   * (down to 1/100 of batchRows); steps grow back, doubling, up to batchRows while they take less
   * than half of it. 0: every step takes batchRows.
   */
  readonly stepMs: number;
  /**
   * The shortest pause between two steps (a pause is never shorter than the step before it):
   * writers get the store, and the backlog drains at a bounded rate.
   */
  readonly pauseMs: number;
}

export interface LedgerSweeper {
  /**
   * Sweeps everything due now, `batchRows` at a time, pausing `pauseMs` between steps. Aborting
   * `signal` stops it between two steps (each step commits on its own, so nothing is half done);
   * the next run resumes at the oldest row still due. A run started while one is under way joins it.
   */
  run(signal?: AbortSignal): Promise<SweepResult>;
  /** A plain getter, cheap to poll (a metrics scrape, the store view). */
  readonly progress: SweepProgress;
}

const IDLE: SweepProgress = {
  running: false,
  rowsLeft: 0,
  tombstoned: 0,
  deleted: 0,
  batches: 0,
  startedAt: null,
  finishedAt: null,
  interrupted: false,
};

/**
 * Retention in bounded steps. One transaction over every due row froze a single-connection
 * SQLite process for 5 s per million rows and wrote a 1 GB PostgreSQL transaction that held back
 * VACUUM (docs/performance.md, bench/ledger-scale): here no write waits longer than one step, and a backlog
 * after downtime drains at no more than `batchRows` per (step + `pauseMs`).
 */
export function createLedgerSweeper(options: LedgerSweeperOptions): LedgerSweeper {
  const { store, clock, tombstoneMs, batchRows, stepMs, pauseMs } = options;
  const fewestRows = Math.max(1, Math.floor(batchRows / 100));
  /** The next step's rows, from the last step's rows and time. */
  const nextRows = (rows: number, tookMs: number): number => {
    if (stepMs <= 0) return batchRows;
    if (tookMs > stepMs) return Math.max(fewestRows, Math.floor((rows * stepMs) / tookMs));
    if (tookMs * 2 < stepMs) return Math.min(batchRows, rows * 2);
    return rows;
  };
  let progress: SweepProgress = IDLE;
  let running: Promise<SweepResult> | undefined;

  async function sweepAll(signal: AbortSignal | undefined): Promise<SweepResult> {
    const nowMs = clock.now();
    progress = { ...IDLE, running: true, startedAt: nowMs };
    let tombstoned = 0;
    let deleted = 0;
    let interrupted = false;
    let rows = batchRows;
    try {
      progress = { ...progress, rowsLeft: await store.backlog(nowMs) };
      for (;;) {
        if (signal?.aborted) {
          interrupted = true;
          break;
        }
        const stepStartedAt = clock.now();
        const limit = rows;
        const step = await store.sweep(nowMs, tombstoneMs, limit);
        const tookMs = clock.now() - stepStartedAt;
        // At least as long a pause as the step took: the sweep holds the store (SQLite: the file's
        // write lock) at most half the time, so a writer in another process polling for the lock
        // (every millisecond, in oncely's SQLite stores: write-lock.ts) finds it free at once.
        const pauseNowMs = Math.max(pauseMs, tookMs);
        tombstoned += step.tombstoned;
        deleted += step.deleted;
        progress = {
          ...progress,
          tombstoned,
          deleted,
          batches: progress.batches + (step.tombstoned + step.deleted > 0 ? 1 : 0),
          rowsLeft: Math.max(0, progress.rowsLeft - step.tombstoned - step.deleted),
        };
        if (step.busy) {
          // Another process held the lock the step needed (what it did before that counts): the
          // step is tried again after a pause, not waited for.
          try {
            await clock.sleep(pauseMs, signal);
            continue;
          } catch {
            interrupted = true;
            break;
          }
        }
        rows = nextRows(limit, tookMs);
        if (step.tombstoned < limit && step.deleted < limit) break;
        try {
          await clock.sleep(pauseNowMs, signal);
        } catch {
          interrupted = true;
          break;
        }
      }
      if (!interrupted && tombstoned + deleted > 0) await store.housekeep();
    } finally {
      const rowsLeft = interrupted ? progress.rowsLeft : 0;
      progress = { ...progress, running: false, rowsLeft, interrupted, finishedAt: clock.now() };
    }
    return { tombstoned, deleted };
  }

  return {
    run(signal) {
      running ??= sweepAll(signal).finally(() => {
        running = undefined;
      });
      return running;
    },
    get progress() {
      return progress;
    },
  };
}
