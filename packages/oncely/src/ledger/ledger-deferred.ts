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
import type { CompletedEntry } from './ledger-entry.js';
import type { Effect } from './ledger-execute.js';
import type { ExecuteResult, LedgerRequest } from './ledger-result.js';

/** The claimed way of `execute`, as the deferred way falls back to it. */
export type ExecuteClaimed<Tx> = (
  request: LedgerRequest,
  effect: Effect<Tx>,
) => Promise<ExecuteResult>;

/**
 * `executeDeferred`: on a store that declares a deferred commit (deferred-writes.ts), the effect runs
 * first, without a claim, and its receipt and writes commit at once if the key is still free;
 * else, and on every other store, the claimed way with the writes in its transaction.
 */
export function deferredExecutor<Tx>(
  core: LedgerCore<Tx>,
  executeClaimed: ExecuteClaimed<Tx>,
): (request: LedgerRequest, effect: DeferredEffect) => Promise<ExecuteResult> {
  const { store } = core.o;
  // Declared by the store (StoreCapabilities), read once, not asked per request.
  const { deferredCommit } = store.capabilities;
  const claimedWay = (request: LedgerRequest, effect: DeferredEffect) =>
    executeClaimed(request, async (tx, claimed) => {
      const { receipt, writes } = checkDeferredOutcome(await effect(claimed));
      return withWrites(tx, writes, receipt);
    });
  async function withWrites(tx: Tx, writes: readonly DeferredWrite[], receipt: Receipt) {
    if (writes.length > 0) await runDeferredWrites(store.sql(tx), writes);
    return receipt;
  }

  return async (request, effect) => {
    checkRequest(request);
    if (typeof effect !== 'function')
      throw new InvalidOptionError('effect', effect, 'a function (claim) => { receipt, writes }');
    if (deferredCommit === undefined) return claimedWay(request, effect);
    const held = heldAnswer(core, request);
    if (held !== undefined) return held;
    const made = await runUnclaimed(core, request, effect);
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

/** Runs the effect with no claim and makes its completed entry (or the not-stored answer). */
async function runUnclaimed<Tx>(
  { o }: LedgerCore<Tx>,
  request: LedgerRequest,
  effect: DeferredEffect,
): Promise<
  | { readonly entry: CompletedEntry; readonly writes: readonly DeferredWrite[] }
  | { readonly answer: ExecuteResult }
> {
  const { scope, key, fingerprint } = request;
  const firstSeenAt = o.clock.now();
  // Objects of one fixed shape, the request's fields named (a spread copies whatever the
  // caller's object holds, and makes a new shape when it holds more).
  const { receipt, writes } = checkDeferredOutcome(
    await effect({
      scope,
      key,
      fingerprint,
      firstSeenAt,
      leaseExpiresAt: firstSeenAt,
      tookOver: false,
    }),
  );
  if (!o.shouldStore(receipt)) return { answer: { kind: 'not_stored', receipt } };
  const completedAt = o.clock.now();
  const entry: CompletedEntry = {
    scope,
    key,
    fingerprint,
    state: 'completed',
    token: o.generateToken(),
    firstSeenAt,
    completedAt,
    expiresAt: completedAt + o.retentionMs,
    receipt,
  };
  return { entry, writes };
}
