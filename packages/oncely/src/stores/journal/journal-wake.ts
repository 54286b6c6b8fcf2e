import type { JournalStore } from '../../journal/journal-store.js';
import type { ClaimMarkHearing } from './sql/claim-mark.js';

/**
 * How a journal tells its workers that an intent may be due now, so a recorded intent is
 * attempted at once rather than at the next poll (graphile-worker and River wake their workers
 * with LISTEN/NOTIFY for the same reason). Best effort: a wake that is lost, or comes for nothing,
 * costs at most one poll interval or one claim; the poll stays as the fallback.
 *
 * - In process (memory, SQLite): the listeners of this process hear every write that committed,
 *   and stores opened on one SQLite file in one process share their listeners.
 * - PostgreSQL (postgres-journal-wake.ts): NOTIFY, delivered on COMMIT to every process that
 *   LISTENs, so an intent recorded inside the app's own transaction wakes workers only once it
 *   exists.
 */
export interface JournalWake {
  /** The statement that records an intent, made to wake the listeners as it commits (or as it was). */
  recordStatement(insert: string): string;
  /**
   * Tells the listeners that a write this store committed may have made an intent due: a record
   * (`'record'`: on PostgreSQL its own statement has said so) or a reopening (`'other'`).
   */
  written(kind: 'record' | 'other'): Promise<void>;
  /**
   * Where the store's claim mark (claim-mark.ts) hears of the positions of rows written and of
   * when listening begins and ends; absent where there is no mark (memory, SQLite).
   */
  hearWith?(claimMark: ClaimMarkHearing): void;
  /** Listens again if anything watches and listening had stopped (a lost connection): at each poll. */
  ensure(): void;
  /** Calls `onDue` after each such write until the function it resolves with is called. */
  watch(onDue: () => void): Promise<() => void>;
  close(): Promise<void>;
}

/** A journal store before `withWake` gives it its `watch`. */
export type UnwatchedJournalStore<Tx> = Omit<JournalStore<Tx>, 'watch'>;

/**
 * The store, telling `wake` of each write that may make an intent due once it committed: a
 * record, a reopening. `withinCommits`: `recordWithin` commits at once (memory); elsewhere it
 * commits with the caller's transaction, which only PostgreSQL's NOTIFY follows.
 */
export function withWake<Tx>(
  store: UnwatchedJournalStore<Tx>,
  wake: JournalWake,
  { withinCommits = false } = {},
): JournalStore<Tx> {
  const told = async <T>(written: T, kind: 'record' | 'other'): Promise<T> => {
    if (written === true || (Array.isArray(written) && written.includes(true)))
      await wake.written(kind);
    return written;
  };
  return {
    ...store,
    record: async (intent) => told(await store.record(intent), 'record'),
    recordWithin: async (tx, intent) => {
      const recorded = await store.recordWithin(tx, intent);
      return withinCommits ? told(recorded, 'record') : recorded;
    },
    reopen: async (key, reopening) => told(await store.reopen(key, reopening), 'other'),
    reopenMany: async (reopenings) => told(await store.reopenMany(reopenings), 'other'),
    nextDueAt() {
      wake.ensure(); // a worker asks at each poll: listen again if listening was lost
      return store.nextDueAt();
    },
    watch: (onDue) => wake.watch(onDue),
    async close() {
      await wake.close();
      await store.close();
    },
  };
}

/** The wakes of this process by channel: each member wakes the listeners of its store. */
const channels = new Map<string, Set<() => void>>();

/**
 * The wake of a store in this process. Stores on the same `channel` (the same SQLite file and
 * table) share their listeners; without one, the store's listeners are its own. A function gives
 * the channel once it is known (a database opened on first use): until then the store's own
 * listeners hear its own writes, and it joins the channel at its first write or poll after.
 */
export function inProcessWake(channel?: string | (() => string | undefined)): JournalWake {
  const channelNow = typeof channel === 'function' ? channel : () => channel;
  const listeners = new Set<() => void>();
  const member = (): void => {
    for (const onDue of listeners) onDue();
  };
  let joined: string | undefined;
  const join = (): void => {
    if (joined !== undefined || listeners.size === 0) return;
    const name = channelNow();
    if (name === undefined) return;
    joined = name;
    let members = channels.get(name);
    if (members === undefined) channels.set(name, (members = new Set()));
    members.add(member);
  };
  const leave = (): void => {
    if (joined === undefined) return;
    const members = channels.get(joined);
    members?.delete(member);
    if (members?.size === 0) channels.delete(joined);
    joined = undefined;
  };
  return {
    recordStatement: (insert) => insert,
    ensure: join,
    async written() {
      join();
      const name = joined ?? channelNow();
      const members = name === undefined ? undefined : channels.get(name);
      if (members === undefined) member();
      else for (const wake of [...members]) wake();
    },
    async watch(onDue) {
      // A listener of its own each time, so one function watched twice is stopped twice.
      const listener = (): void => onDue();
      listeners.add(listener);
      join();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) leave();
      };
    },
    async close() {
      leave();
    },
  };
}
