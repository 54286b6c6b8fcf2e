import { createLedger, type Ledger, type LedgerStore } from 'oncely';
import { importOptionalDriver } from '../shared/optional-driver.js';
import { DEFAULT_JOURNAL_FILE, type JournalFlags } from '../cli/commands/journal-options.js';

/** The API's receipts: a ledger table of its own beside the journal's tables. */
export const API_RECEIPTS_TABLE = 'oncely_outbox_api_receipts';

export interface ApiLedger {
  readonly ledger: Ledger<unknown>;
  close(): Promise<void>;
}

/**
 * The ledger of `oncely outbox serve`, in the journal's own database (the file of --journal, the
 * database of --db): one backup holds the intents and the answers given about them. Its tables
 * are made here, so an unreachable database fails at start, not on the first write.
 */
export async function openApiLedger(flags: JournalFlags): Promise<ApiLedger> {
  let store: LedgerStore<unknown>;
  if (flags.db !== undefined) {
    const url = flags.db;
    const { openPostgresPool, createPostgresStore } = await importOptionalDriver(
      'pg',
      'the PostgreSQL journal (--db)',
      () => import('oncely/stores/postgres'),
    );
    // A pool the store makes itself: it ends it on close.
    store = createPostgresStore({
      pool: () => openPostgresPool(url),
      table: API_RECEIPTS_TABLE,
    }) as LedgerStore<unknown>;
  } else {
    const file = flags.journal ?? DEFAULT_JOURNAL_FILE;
    const { openSqliteDatabase, createSqliteStore } = await importOptionalDriver(
      'better-sqlite3',
      'the SQLite journal',
      () => import('oncely/stores/sqlite'),
    );
    store = createSqliteStore({
      database: () => openSqliteDatabase(file),
      table: API_RECEIPTS_TABLE,
    }) as LedgerStore<unknown>;
  }
  try {
    await store.ready();
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  return { ledger: createLedger({ store }), close: () => store.close() };
}
