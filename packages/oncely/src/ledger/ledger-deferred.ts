import { InvalidOptionError } from '../contract/errors.js';
import type { Receipt } from '../contract/receipt.js';
import {
  DeferredWriteError,
  runDeferredWrites,
  type DeferredEffect,
  type DeferredWrite,
} from './deferred-writes.js';
import { checkDeferredOutcome, checkRequest, completedAnswer } from './ledger-answers.js';
import { heldAnswer, type LedgerCore } from './ledger-claim.js';
import type { Effect } from './ledger-execute.js';
import { deferredInTransaction } from './ledger-deferred-in-transaction.js';
import { runUnclaimed } from './run-unclaimed.js';
import type { ExecuteResult, LedgerRequest } from './ledger-result.js';

/** The claimed way of `execute`, as the deferred way falls back to it. */
export type ExecuteClaimed<Tx> = (
  request: LedgerRequest,
  effect: Effect<Tx>,
) => Promise<ExecuteResult>;

/**
 * `executeDeferred`: on a store that declares a deferred commit (deferred-writes.ts), the effect runs
 * first, without a claim, and its receipt and writes commit at once if the key is still free
 * (on an ORM store, at the end of the transaction the effect ran in:
 * ledger-deferred-in-transaction.ts); else, and on every other store, the claimed way with the
 * writes in its transaction.
 */
export function deferredExecutor<Tx>(
  core: LedgerCore<Tx>,
  executeClaimed: ExecuteClaimed<Tx>,
): (request: LedgerRequest, effect: DeferredEffect<Tx>) => Promise<ExecuteResult> {
  const { store } = core.o;
  // Declared by the store (StoreCapabilities), read once, not asked per request.
  const { deferredCommit } = store.capabilities;
  const inTransaction = deferredCommit?.inTransaction;
  // A deferred effect run the claimed way never sees the handle: its writes are deferred.
  const claimedWay = (request: LedgerRequest, effect: DeferredEffect<Tx>) =>
    executeClaimed(request, async (tx, claimed) => {
      const { receipt, writes } = checkDeferredOutcome(await effect(claimed, undefined));
      return withWrites(tx, writes, receipt);
    });
  async function withWrites(tx: Tx, writes: readonly DeferredWrite[], receipt: Receipt) {
    if (writes.length > 0) await runDeferredWrites(store.sql(tx), writes);
    return receipt;
  }
  const inside =
    inTransaction === undefined
      ? undefined
      : deferredInTransaction(core, inTransaction, claimedWay);

  return async (request, effect) => {
    checkRequest(request);
    if (typeof effect !== 'function')
      throw new InvalidOptionError('effect', effect, 'a function (claim) => { receipt, writes }');
    if (deferredCommit === undefined) return claimedWay(request, effect);
    if (inside !== undefined) return inside(request, effect);
    const held = heldAnswer(core, request);
    if (held !== undefined) return held;
    const made = await runUnclaimed(core, request, (claim) => effect(claim, undefined));
    if ('answer' in made) return made.answer;
    let committed: boolean;
    try {
      committed = await deferredCommit(made.entry, made.writes);
    } catch (error) {
      if (error instanceof DeferredWriteError) throw error;
      return { kind: 'unavailable', stage: 'transaction', cause: error };
    }
    if (committed) {
      core.receipts.put(made.entry);
      return completedAnswer('executed', made.entry);
    }
    // The key has a row: a replay, a conflict, a request in flight, or an expired key to take
    // over. The claimed way decides; if it runs the effect, the answer is the one already made.
    return executeClaimed(request, (tx) => withWrites(tx, made.writes, made.entry.receipt));
  };
}
