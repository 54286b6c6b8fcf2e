import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './sqlite-database.js';
import type { CheckpointReply, CheckpointWorkerData } from './sqlite-checkpoint-worker.js';

/**
 * WAL checkpoints off the request path. SQLite's own auto-checkpoint runs inside the COMMIT that
 * pushes the WAL past 1000 pages: better-sqlite3 is synchronous, so that request (and, in this
 * process, every other one) waits while 4 MB are copied into the database and fsynced, tens of ms
 * on a busy disk, and during a sweep that happens every few steps. Here a worker thread with its
 * own connection does the copying instead (sqlite-checkpoint-worker.ts), asked each time the
 * store estimates it has written about as many pages as SQLite's own threshold.
 *
 * The writer keeps an auto-checkpoint of its own at a much larger size, as a net: should the
 * estimate fall short (an effect that writes large rows), the WAL still stops growing there. The
 * thread starts with the first few hundred pages written (a store that writes little never starts
 * one); if it cannot start or dies, the writer's default auto-checkpoint comes back.
 */
export interface SqliteCheckpointer {
  /** Tells the checkpointer about roughly `pages` pages written to the WAL. */
  wrote(pages: number): void;
  /** What the thread has done so far. */
  readonly progress: CheckpointProgress;
  /** Ends the thread and its connection. */
  close(): Promise<void>;
}

export interface CheckpointProgress {
  /** 'thread' while the thread runs or is yet to start; 'inline' once it could not (SQLite's own). */
  readonly where: 'thread' | 'inline';
  /** True once the thread took over from the writer's auto-checkpoint. */
  readonly started: boolean;
  /** Checkpoints the thread has run, and the WAL frames its last one found. */
  readonly checkpoints: number;
  readonly walFrames: number;
}

/** Pages between two checkpoints: SQLite's own wal_autocheckpoint default. */
export const CHECKPOINT_PAGES = 1000;
/** The writer's own auto-checkpoint while the thread runs (40 MB of 4 KiB pages): only a net. */
export const NET_AUTOCHECKPOINT_PAGES = 10_000;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

export function sqliteCheckpointer(
  writer: SqliteDatabase,
  file: string,
  journalSizeLimit: number,
): SqliteCheckpointer {
  let pending = 0;
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  let ready = false;
  let asked = false;
  let stopped = false;
  const progress = {
    where: 'thread' as 'thread' | 'inline',
    started: false,
    checkpoints: 0,
    walFrames: 0,
  };

  function start(): void {
    const data: CheckpointWorkerData = { file, journalSizeLimit };
    const thread = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
      workerData: data,
    });
    thread.unref(); // never what keeps the process alive
    exited = new Promise((resolve) => thread.once('exit', () => resolve()));
    thread.on('message', (message: 'ready' | CheckpointReply) => {
      if (stopped) return;
      if (message === 'ready') {
        ready = true;
        progress.started = true;
        writer.pragma(`wal_autocheckpoint = ${NET_AUTOCHECKPOINT_PAGES}`);
      } else {
        asked = false;
        if ('log' in message) {
          progress.checkpoints++;
          progress.walFrames = message.log;
        }
      }
      ask();
    });
    thread.on('error', giveUp);
    thread.on('exit', giveUp);
    worker = thread;
  }

  /** Without the thread, SQLite checkpoints on the writer again, as it does by default. */
  function giveUp(): void {
    if (stopped) return;
    stopped = true;
    ready = false;
    progress.where = 'inline';
    try {
      writer.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    } catch {
      // the writer is closed already
    }
  }

  function ask(): void {
    if (!ready || asked || pending < CHECKPOINT_PAGES) return;
    pending = 0;
    asked = true;
    worker!.postMessage('checkpoint');
  }

  return {
    wrote(pages) {
      if (stopped) return;
      pending += pages;
      if (worker === undefined && pending >= CHECKPOINT_PAGES / 2) {
        try {
          start();
        } catch {
          giveUp(); // no thread here (a runtime without workers): SQLite checkpoints as usual
          return;
        }
      }
      ask();
    },
    get progress() {
      return { ...progress };
    },
    async close() {
      stopped = true;
      // Referenced again while it closes its connection: an unreferenced thread would let the
      // process end with this promise unsettled.
      worker?.ref();
      worker?.postMessage('close');
      await exited;
    },
  };
}
