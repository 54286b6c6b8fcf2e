/**
 * The SQLite checkpointer's thread (sqlite-checkpointer.ts): its own connection to the ledger's
 * file, which copies the WAL back into the database when asked, so the copy and its fsyncs never
 * run on the thread that answers requests. A PASSIVE checkpoint waits for no lock: writers go on
 * appending to the WAL meanwhile (https://www.sqlite.org/wal.html#ckpt).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { importOptionalDriver } from '../optional-driver.js';

export interface CheckpointWorkerData {
  readonly file: string;
  readonly journalSizeLimit: number;
}

/** What one checkpoint did: PRAGMA wal_checkpoint's row, or why it failed. */
export type CheckpointReply =
  | { readonly busy: number; readonly log: number; readonly checkpointed: number }
  | { readonly error: string };

const port = parentPort;
if (port) {
  const { file, journalSizeLimit } = workerData as CheckpointWorkerData;
  const { default: Database } = await importOptionalDriver(
    'better-sqlite3',
    'the SQLite checkpointer',
    () => import('better-sqlite3'),
  );
  const db = new Database(file, { fileMustExist: true });
  // The checkpoint fsyncs the WAL before copying and the database after (synchronous = FULL is
  // a new connection's default); after a complete one the next writer starts the WAL over.
  db.pragma(`journal_size_limit = ${journalSizeLimit}`);
  port.on('message', (message: unknown) => {
    if (message !== 'checkpoint') {
      db.close();
      port.close();
      return;
    }
    try {
      const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{
        busy: number;
        log: number;
        checkpointed: number;
      }>;
      port.postMessage(row satisfies CheckpointReply | undefined);
    } catch (error) {
      port.postMessage({ error: error instanceof Error ? error.message : String(error) });
    }
  });
  port.postMessage('ready');
}
