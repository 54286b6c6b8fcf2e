import type { JournalStore } from '../../journal/journal-store.js';

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

/** Listeners by channel, for every in-process wake of this process. */
const channels = new Map<string, Set<() => void>>();
/** Names the channels of stores that share with none. */
let unshared = 0;

/**
 * The wake of a store in this process. Stores given the same `channel` (the same SQLite file and
 * table) share their listeners; without one, the store's listeners are its own.
 */
export function inProcessWake(channel?: string): JournalWake {
  const name = channel ?? `\0unshared-${(unshared += 1)}`;
  const listeners = (): Set<() => void> => {
    let set = channels.get(name);
    if (set === undefined) channels.set(name, (set = new Set()));
    return set;
  };
  return {
    recordStatement: (insert) => insert,
    ensure() {},
    async written() {
      for (const onDue of channels.get(name) ?? []) onDue();
    },
    async watch(onDue) {
      // A listener of its own each time, so one function watched twice is stopped twice.
      const listener = (): void => onDue();
      listeners().add(listener);
      return () => {
        const set = channels.get(name);
        set?.delete(listener);
        if (set?.size === 0) channels.delete(name);
      };
    },
    async close() {},
  };
}
