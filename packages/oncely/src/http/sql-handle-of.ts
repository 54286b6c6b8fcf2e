import { OncelyError } from '../contract/errors.js';
import type { LedgerStore } from '../ledger/ledger-store.js';
import type { SqlHandle } from '../ledger/sql-handle.js';

/**
 * How a guarded handler's `context.sql` is made from the ledger's transaction handle: the store's
 * own SQL handle, or, on a store without SQL, one whose every call rejects with a clear error
 * (a handler that needs SQL must not silently run against nothing).
 */
export function sqlHandleOf<Tx>(store: LedgerStore<Tx>): (tx: Tx) => SqlHandle {
  if (store.sql) return store.sql.bind(store);
  const error = (): OncelyError =>
    new OncelyError(
      'no_sql',
      `the ${store.name} store has no SQL: use context.tx, or a SQLite or PostgreSQL store for context.sql`,
    );
  const refuse = (): Promise<never> => Promise.reject(error());
  const handle: SqlHandle = {
    get dialect(): never {
      throw error();
    },
    run: refuse,
    get: refuse,
    all: refuse,
  };
  return () => handle;
}
