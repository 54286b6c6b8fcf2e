import type { CompletedEntry } from '../../../ledger/ledger-entry.js';
import { runDeferredWrites, type DeferredCommit } from '../../../ledger/deferred-writes.js';
import type { SqlHandle } from '../../../ledger/sql-handle.js';

/** Thrown inside the transaction only to roll it back: the key had a row. */
const KEY_HAS_ROW = Symbol('key has a row');

/**
 * The ORM stores' deferred commit (StoreCapabilities.deferredCommit): the shape of PostgreSQL's
 * (postgres-deferred.ts: no claim; the writes and the key's row in one transaction, the row
 * taking the key's lock and going in only if the key has none; else nothing lands), run through
 * the ORM's transaction, one request per transaction. The ledger uses `inTransaction`: the route
 * runs inside the transaction, writing through the ORM's handle, and the row ends it
 * (ledger-deferred-in-transaction.ts). Called itself, it commits `writes` and the row in a
 * transaction of its own.
 */
export function ormDeferredCommit<H>(
  transaction: <T>(fn: (tx: H) => Promise<T>) => Promise<T>,
  sqlOf: (tx: H) => SqlHandle,
  rowIn: (tx: H, entry: CompletedEntry) => Promise<boolean>,
  placeRow: (firstSeenAt: number) => Promise<void>,
): DeferredCommit {
  const inTransaction = {
    prepare: placeRow,
    commit: (tx: unknown, entry: CompletedEntry) => rowIn(tx as H, entry),
  };
  async function commit(entry: CompletedEntry, writes: Parameters<DeferredCommit>[1]) {
    // The row's partition first, so that false says the key had a row, nothing else.
    await placeRow(entry.firstSeenAt);
    try {
      return await transaction(async (tx) => {
        await runDeferredWrites(sqlOf(tx), writes);
        if (!(await rowIn(tx, entry))) throw KEY_HAS_ROW;
        return true;
      });
    } catch (error) {
      if (error === KEY_HAS_ROW) return false;
      throw error;
    }
  }
  return Object.assign(commit, { inTransaction });
}
