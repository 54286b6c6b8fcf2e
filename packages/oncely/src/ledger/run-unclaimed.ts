import type { DeferredOutcome, DeferredWrite } from './deferred-writes.js';
import { checkDeferredOutcome } from './ledger-answers.js';
import type { LedgerCore } from './ledger-claim.js';
import type { CompletedEntry } from './ledger-entry.js';
import type { Claim, ExecuteResult, LedgerRequest } from './ledger-result.js';

/** Runs the effect with no claim and makes its completed entry (or the not-stored answer). */
export async function runUnclaimed<Tx>(
  { o }: LedgerCore<Tx>,
  request: LedgerRequest,
  effect: (claim: Claim) => DeferredOutcome | Promise<DeferredOutcome>,
  firstSeenAt: number = o.clock.now(),
): Promise<
  | { readonly entry: CompletedEntry; readonly writes: readonly DeferredWrite[] }
  | { readonly answer: ExecuteResult }
> {
  const { scope, key, fingerprint } = request;
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
