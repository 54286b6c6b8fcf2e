import { createOutboxWorker, type JournalStore, type SqlHandle, type Clock } from 'oncely';
import { importOptionalDriver } from '../shared/optional-driver.js';
import type { Backend, BackendOptions } from './open-backend.js';

/** The hook receiver's notifications: a journal in the ledger's own database and a worker that delivers it. */
export interface NotificationOutbox {
  readonly store: JournalStore<SqlHandle>;
  /**
   * Starts the worker. Call it once the server's own tables are set up: on SQLite the worker's
   * claim runs on a connection of its own, so a claim made while the set-up holds the file's write
   * lock across an await waits for that lock (and fails after the busy timeout, 5 s, if the set-up
   * takes longer) instead of delivering.
   */
  start(): void;
  /** Stops the worker (an attempt under way finishes), then closes the journal. */
  stop(): Promise<void>;
}

/**
 * Opens the journal beside the ledger (the same SQLite file, or the same PostgreSQL database and
 * schema), so the hook receiver can record a notification inside the ack's own transaction, with
 * the outbox worker that delivers them while the server runs (`oncely serve --notify-url`), which
 * waits for start().
 */
export async function openNotificationOutbox(
  backend: Backend<unknown>,
  options: BackendOptions,
  clock: Clock,
  onError: (error: unknown) => void,
): Promise<NotificationOutbox> {
  let store: JournalStore<SqlHandle>;
  if (backend.kind === 'sqlite') {
    const { openSqliteDatabase, createSqliteJournalStore } = await importOptionalDriver(
      'better-sqlite3',
      'the SQLite journal',
      () => import('oncely/stores/sqlite'),
    );
    store = createSqliteJournalStore({ database: () => openSqliteDatabase(backend.description) });
  } else {
    const { openPostgresPool, createPostgresJournalStore } = await importOptionalDriver(
      'pg',
      'the PostgreSQL journal',
      () => import('oncely/stores/postgres'),
    );
    const url = options.db ?? '';
    store = createPostgresJournalStore({
      pool: () =>
        openPostgresPool(
          url,
          options.pgSchema === undefined ? {} : { searchPath: options.pgSchema },
        ),
      ...(options.pgSchema === undefined ? {} : { schema: options.pgSchema }),
    });
  }
  await store.ready();
  const controller = new AbortController();
  const worker = createOutboxWorker({ store, clock, pollMs: 500 });
  let running: Promise<void> | undefined;
  const deliver = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      try {
        await worker.run(controller.signal);
      } catch (error) {
        onError(error); // the database went away for a moment: keep delivering once it is back
        await clock.sleep(1000, controller.signal).catch(() => undefined);
      }
    }
  };
  return {
    store,
    start() {
      running ??= deliver();
    },
    async stop() {
      controller.abort();
      await running;
      await store.close();
    },
  };
}
