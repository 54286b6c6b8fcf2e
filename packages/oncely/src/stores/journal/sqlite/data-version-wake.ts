import type { Clock } from '../../../time/clock.js';
import type { JournalWake } from '../journal-wake.js';
import type { SqliteDatabase, SqliteStatement } from '../../sqlite-driver/sqlite-database.js';

/** How often a watched SQLite journal looks for another process's commit. */
export const DATA_VERSION_POLL_MS = 1;

/**
 * The in-process wake of a SQLite journal, plus the commits of other processes: while a worker
 * watches, `PRAGMA data_version` is read every millisecond (SQLite changes it on this connection
 * when another connection commits to the file; reading it touches no page). A change wakes the
 * watchers, so an intent recorded by another process is attempted within about a millisecond
 * rather than at the next poll (1 s). The read costs a few microseconds; nothing runs while no
 * one watches, and the timer (the clock's background sleep) never keeps the process alive. A
 * clock without background sleeps polls nothing: the worker's own poll stays the fallback.
 */
export function withDataVersionWake(
  inner: JournalWake,
  dataVersion: () => number | undefined,
  clock: Clock,
): JournalWake {
  const watchers = new Set<() => void>();
  let poll: AbortController | undefined;
  let last: number | undefined;
  const look = (): void => {
    const now = dataVersion();
    if (now === undefined) return;
    const changed = last !== undefined && now !== last;
    last = now;
    if (changed) for (const onDue of watchers) onDue();
  };
  const stopPolling = (): void => {
    poll?.abort();
    poll = undefined;
    last = undefined;
  };
  const startPolling = (): void => {
    const sleep = clock.sleepInBackground?.bind(clock);
    if (sleep === undefined) return;
    const stop = (poll = new AbortController());
    look();
    void (async () => {
      while (!stop.signal.aborted) {
        await sleep(DATA_VERSION_POLL_MS, stop.signal).catch(() => undefined);
        if (!stop.signal.aborted) look();
      }
    })();
  };
  return {
    ...inner,
    async watch(onDue) {
      const unwatchInner = await inner.watch(onDue);
      const watcher = (): void => onDue();
      watchers.add(watcher);
      if (poll === undefined) startPolling();
      return () => {
        unwatchInner();
        watchers.delete(watcher);
        if (watchers.size === 0) stopPolling();
      };
    },
    async close() {
      stopPolling();
      watchers.clear();
      await inner.close();
    },
  };
}

/** Reads `PRAGMA data_version` on the connection given, if one is open; undefined otherwise. */
export function dataVersionOf(
  connection: () => SqliteDatabase | undefined,
): () => number | undefined {
  let prepared: { db: SqliteDatabase; statement: SqliteStatement } | undefined;
  return () => {
    const db = connection();
    if (db === undefined) return undefined;
    try {
      if (prepared?.db !== db) prepared = { db, statement: db.prepare('PRAGMA data_version') };
      return (prepared.statement.get() as { data_version: number }).data_version;
    } catch {
      return undefined; // a connection closed under the store: the worker's poll stays the fallback
    }
  };
}
