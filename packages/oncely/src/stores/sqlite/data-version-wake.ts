import type { JournalWake } from '../journal-wake.js';

/** How often a watched SQLite journal looks for another process's commit. */
export const DATA_VERSION_POLL_MS = 1;

/**
 * The in-process wake of a SQLite journal, plus the commits of other processes: while a worker
 * watches, `PRAGMA data_version` is read every millisecond (SQLite changes it on this connection
 * when another connection commits to the file; reading it touches no page). A change wakes the
 * watchers, so an intent recorded by another process is attempted within about a millisecond
 * rather than at the next poll (1 s). The read costs a few microseconds; nothing runs while no
 * one watches, and the timer never keeps the process alive.
 */
export function withDataVersionWake(
  inner: JournalWake,
  dataVersion: () => number | undefined,
): JournalWake {
  const watchers = new Set<() => void>();
  let poll: ReturnType<typeof setInterval> | undefined;
  let last: number | undefined;
  const look = (): void => {
    const now = dataVersion();
    if (now === undefined) return;
    const changed = last !== undefined && now !== last;
    last = now;
    if (changed) for (const onDue of watchers) onDue();
  };
  const stopPolling = (): void => {
    clearInterval(poll);
    poll = undefined;
    last = undefined;
  };
  return {
    ...inner,
    async watch(onDue) {
      const unwatchInner = await inner.watch(onDue);
      const watcher = (): void => onDue();
      watchers.add(watcher);
      if (poll === undefined) {
        look();
        poll = setInterval(look, DATA_VERSION_POLL_MS);
        poll.unref();
      }
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
