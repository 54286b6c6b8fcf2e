import { createLedger } from '#oncely/ledger/ledger.js';
import { setUpHookHits } from '#cli/receivers/hook/hook-hits-table.js';
import {
  createHookService,
  type HookService,
  type HookServiceOptions,
} from '#cli/receivers/hook/hook-service.js';
import { sqliteServiceDatabase } from '#cli/receivers/sql/service-database.js';
import { openSqliteDatabase } from '#oncely/stores/sqlite-driver/open-sqlite-database.js';
import type { SqliteTx } from '#oncely/stores/sqlite-driver/sqlite-database.js';
import { createSqliteStore } from '#oncely/stores/ledger/sqlite/sqlite-store.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';

/** A hook service on its own in-memory SQLite ledger, as `oncely hook` runs it. */
export async function openHookService(
  options: Omit<HookServiceOptions<SqliteTx>, 'ledger' | 'db'> = {},
): Promise<HookService> {
  const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
  const db = sqliteServiceDatabase(store);
  await setUpHookHits(db);
  const ledger = createLedger({ store, clock: options.clock ?? new VirtualClock() });
  return createHookService({ ...options, ledger, db });
}
