import { OncelyError } from '../contract/errors.js';
import type { LedgerStore } from './ledger-store.js';

/**
 * Opens the store now and checks that it answers, so a bad SQLite path or PostgreSQL URL is one
 * clear error before a server listens, not a 503 on its first request (stores open lazily).
 */
export async function storeReady(
  store: Pick<LedgerStore<unknown>, 'name' | 'ready'>,
  what = 'store',
): Promise<void> {
  try {
    await store.ready();
  } catch (cause) {
    const why = cause instanceof Error ? cause.message || cause.name : String(cause);
    throw new OncelyError('store_unavailable', `the ${store.name} ${what} cannot be used: ${why}`, {
      cause,
    });
  }
}
