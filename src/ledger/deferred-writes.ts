import { OncelyError } from '../contract/errors.js';
import type { Receipt } from '../contract/receipt.js';
import type { Claim } from './ledger-result.js';
import type { SqlHandle } from './sql-handle.js';

/**
 * A write an effect leaves for the commit: it runs after the effect has answered, in the same
 * transaction as the receipt, in the order deferred. Its result is never seen by the effect.
 */
export interface DeferredWrite {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** What a deferred effect answers: its receipt, and the writes that commit with it. */
export interface DeferredOutcome {
  readonly receipt: Receipt;
  readonly writes: readonly DeferredWrite[];
}

/**
 * An effect that writes only through deferred writes and has no other side effect: it may run
 * for a duplicate that then loses the key (its writes never commit), so that the first request
 * needs no lease, and on PostgreSQL its receipt and writes go in one round trip.
 */
export type DeferredEffect = (claim: Claim) => DeferredOutcome | Promise<DeferredOutcome>;

/** A deferred write that failed at commit: the effect's own error (a constraint, a typo), not the store's. */
export class DeferredWriteError extends OncelyError {
  constructor(write: DeferredWrite, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('deferred_write_failed', `a deferred write failed at commit (${write.sql}): ${reason}`, {
      cause,
    });
    this.name = 'DeferredWriteError';
  }
}

/** Runs `writes` in order through `sql` (inside the ledger's transaction); a failure is the effect's. */
export async function runDeferredWrites(
  sql: SqlHandle,
  writes: readonly DeferredWrite[],
): Promise<void> {
  for (const write of writes) {
    try {
      await sql.run(write.sql, write.params);
    } catch (error) {
      throw new DeferredWriteError(write, error);
    }
  }
}
