import type { Clock } from '../../../time/clock.js';
import type { JournalWake } from '../journal-wake.js';
import type { SqliteDatabase, SqliteStatement } from '../../sqlite-driver/sqlite-database.js';
import { nodeWalSignal, type WalSignal } from './wal-watch.js';

/** The pause between two looks while commits may be on their way. */
export const DATA_VERSION_POLL_MS = 1;
/**
 * How long the looks stay 1 ms apart after a write to the WAL file: a commit is written to the
 * log before its fsync and visible only once that returned, so the write comes an fsync early
 * (about 1 ms on an SSD, tens under load).
 */
export const WAL_WRITE_BURST_MS = 50;
/** The longest pause between two looks at a quiet, watched file: what a missed file event costs. */
export const QUIET_POLL_MAX_MS = 250;

/** What the wake reads of the store's connection. */
export interface DataVersionSource {
  /** `PRAGMA data_version` on the connection; undefined while none is open. */
  dataVersion(): number | undefined;
  /** The connection's WAL file; undefined while none is open, null for a database in memory. */
  walFile(): string | null | undefined;
}

/**
 * The pause before the next look: 1 ms without a watch on the WAL file or within
 * WAL_WRITE_BURST_MS of the last write or commit seen, then longer as the file stays quiet
 * (a 50th of the quiet time, at most QUIET_POLL_MAX_MS).
 */
export function nextLookMs(watched: boolean, quietMs: number): number {
  if (!watched || quietMs < WAL_WRITE_BURST_MS) return DATA_VERSION_POLL_MS;
  return Math.min(QUIET_POLL_MAX_MS, Math.floor(quietMs / WAL_WRITE_BURST_MS));
}

/**
 * The in-process wake of a SQLite journal, plus the commits of other processes: while a worker
 * watches, `PRAGMA data_version` is read (SQLite changes it on this connection when another
 * connection commits to the file; reading it touches no page), and a change wakes the watchers,
 * so an intent recorded by another process is attempted within about a millisecond rather than
 * at the worker's next poll (1 s).
 *
 * Reading every millisecond costs a core about 5 % while nothing happens, so the WAL file is
 * watched too (wal-watch.ts). A store that recorded an intent touches the file once its commit is
 * visible, and the other processes' watches look at once. Any other commit (an app's own
 * transaction, a worker's) only writes to the file, before its fsync: from that write the looks
 * run 1 ms apart until WAL_WRITE_BURST_MS after the last one, then space out while the file is
 * quiet, up to QUIET_POLL_MAX_MS apart, the fallback for a file event that never comes. Where the file cannot be watched, the looks stay 1 ms apart. Nothing runs while no one
 * watches; the timers (the clock's background sleeps) and the file watch never keep the process
 * alive. A clock without background sleeps looks at nothing: the worker's own poll stays the
 * fallback.
 */
export function withDataVersionWake(
  inner: JournalWake,
  source: DataVersionSource,
  clock: Clock,
  signal: WalSignal = nodeWalSignal,
): JournalWake {
  const watchers = new Set<() => void>();
  let poll: AbortController | undefined;
  let last: number | undefined;
  /** The last write to the WAL or commit seen. */
  let activeAt = clock.now();
  /** The WAL file's watch: its stop function, 'unwatchable', or undefined before it was tried. */
  let file: (() => void) | 'unwatchable' | undefined;
  /** Ends a long pause early when the WAL file is written. */
  let nudge: (() => void) | undefined;

  const look = (): void => {
    const now = source.dataVersion();
    if (now === undefined) return;
    const changed = last !== undefined && now !== last;
    last = now;
    if (!changed) return;
    activeAt = clock.now();
    for (const onDue of watchers) onDue();
  };
  const onWrite = (): void => {
    activeAt = clock.now();
    look(); // a touch comes after its commit: seen now; a commit's own write comes before it
    nudge?.();
  };
  /** Watches the WAL once a connection is open: true while the watch holds. */
  const watched = (): boolean => {
    if (file === undefined) {
      const wal = source.walFile();
      if (typeof wal !== 'string') return false;
      file = signal.watch(wal, onWrite, () => (file = undefined)) ?? 'unwatchable';
      activeAt = clock.now(); // a write just before the watch began is looked for at 1 ms
    }
    return typeof file === 'function';
  };
  const stopPolling = (): void => {
    poll?.abort();
    poll = undefined;
    last = undefined;
    if (typeof file === 'function') file();
    file = undefined;
  };
  const startPolling = (): void => {
    const sleep = clock.sleepInBackground?.bind(clock);
    if (sleep === undefined) return;
    const stop = (poll = new AbortController());
    look();
    void (async () => {
      while (!stop.signal.aborted && source.walFile() !== null) {
        const ms = nextLookMs(watched(), clock.now() - activeAt);
        await pause(sleep, ms, stop.signal);
        if (!stop.signal.aborted) look();
      }
    })();
  };
  /**
   * Sleeps `ms`; a pause longer than a look's ends at the next write to the WAL file. The write
   * ends it by resolving it, not by aborting its timer: an abort dispatches an event, which cost
   * a cold process about 0.1 ms in front of the wake-up it came with. The timer is left to run
   * out (a background one: it holds nothing open); `stop` still ends it.
   */
  const pause = (
    sleep: NonNullable<Clock['sleepInBackground']>,
    ms: number,
    stop: AbortSignal,
  ): Promise<void> => {
    if (ms <= DATA_VERSION_POLL_MS) return sleep(ms, stop).catch(() => undefined);
    return new Promise<void>((resolve) => {
      const early = (): void => {
        if (nudge === early) nudge = undefined;
        resolve();
      };
      nudge = early;
      sleep(ms, stop).then(early, early);
    });
  };
  return {
    ...inner,
    async written(kind) {
      await inner.written(kind);
      // The commit is visible now: another process's watch hears the touch and looks at once.
      const wal = source.walFile();
      if (typeof wal === 'string') signal.touch(wal, clock.now());
    },
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

/**
 * What the wake reads of the connection given, if one is open: `PRAGMA data_version`, and the
 * WAL file beside the database's (better-sqlite3's `name`; '' or ':memory:' for none).
 */
export function dataVersionOf(connection: () => SqliteDatabase | undefined): DataVersionSource {
  let prepared: { db: SqliteDatabase; statement: SqliteStatement } | undefined;
  return {
    dataVersion() {
      const db = connection();
      if (db === undefined) return undefined;
      try {
        if (prepared?.db !== db) prepared = { db, statement: db.prepare('PRAGMA data_version') };
        return (prepared.statement.get() as { data_version: number }).data_version;
      } catch {
        return undefined; // a connection closed under the store: the worker's poll stays the fallback
      }
    },
    walFile() {
      const name = connection()?.name;
      if (name === undefined) return undefined;
      return name === '' || name === ':memory:' ? null : `${name}-wal`;
    },
  };
}
