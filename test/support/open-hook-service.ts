import { createLedger } from '../../src/ledger/ledger.js';
import { setUpHookHits } from '../../apps/receivers/hook/hook-hits-table.js';
import {
  createHookService,
  type HookService,
  type HookServiceOptions,
} from '../../apps/receivers/hook/hook-service.js';
import { sqliteServiceDatabase } from '../../apps/receivers/sql/service-database.js';
import { openSqliteDatabase } from '../../src/stores/sqlite/open-sqlite-database.js';
import type { SqliteTx } from '../../src/stores/sqlite/sqlite-database.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

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
