import { OncelyError } from '../contract/errors.js';
import { decideClaim } from './decide-claim.js';
import { completedAnswer, conflictAnswer } from './ledger-answers.js';
import { versionOf, type InFlightEntry } from './ledger-entry.js';
import type { ResolvedLedgerOptions } from './ledger-options.js';
import type { ExecuteResult, LedgerRequest } from './ledger-result.js';
import type { ReceiptCache } from './receipt-cache.js';

/** What the ledger's parts share: the options and the receipts this process holds. */
export interface LedgerCore<Tx> {
  readonly o: ResolvedLedgerOptions<Tx>;
  readonly receipts: ReceiptCache;
  /**
   * Keep each receipt as it is written, not only once a retry read it back: where a retry would
   * cost more than a local read (a store with deferred commits, PostgreSQL: a deferred retry runs
   * its handler before the store is asked, and a lookup is a round trip). Elsewhere most keys are
   * never sent again, and keeping every receipt written cost a new key garbage collection.
   */
  readonly keepWritten: boolean;
}

/** The key is this worker's now (`tookOver`: from a worker whose lease ran out), or the answer. */
export type ClaimOutcome =
  | { readonly claimed: InFlightEntry; readonly tookOver: boolean }
  | { readonly answer: ExecuteResult };

/** Claim rounds lost to other workers' concurrent writes before giving up as unavailable. */
const MAX_CLAIM_ROUNDS = 8;

/** A fresh in-flight entry for this worker; a takeover keeps the first sighting of the request. */
export function freshEntry<Tx>(
  { o }: LedgerCore<Tx>,
  request: LedgerRequest,
  nowMs: number,
  firstSeenAt: number,
): InFlightEntry {
  return {
    scope: request.scope,
    key: request.key,
    fingerprint: request.fingerprint,
    state: 'in_flight',
    token: o.generateToken(),
    firstSeenAt,
    leaseExpiresAt: nowMs + o.leaseMs,
    expiresAt: nowMs + o.retentionMs,
  };
}

/** A receipt this process holds answers a replay (or a conflict) without the store. */
export function heldAnswer<Tx>(
  { o, receipts }: LedgerCore<Tx>,
  request: LedgerRequest,
): ExecuteResult | undefined {
  const held = receipts.get(request.scope, request.key, o.clock.now());
  if (held === undefined) return undefined;
  return held.fingerprint === request.fingerprint
    ? completedAnswer('replayed', held)
    : conflictAnswer(held);
}

/**
 * Claims the request's key, or answers from what it holds (decide-claim.ts decides); loops only
 * while other workers' writes change the key under it.
 */
export async function claimOrAnswer<Tx>(
  core: LedgerCore<Tx>,
  request: LedgerRequest,
): Promise<ClaimOutcome> {
  const held = heldAnswer(core, request);
  if (held !== undefined) return { answer: held };
  const { store, clock } = core.o;
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    // One store call looks the key up and claims it when free: a new key costs one statement.
    const fresh = freshEntry(core, request, clock.now(), clock.now());
    const attempt = await store.claim(fresh);
    if (attempt.won) return { claimed: fresh, tookOver: false };
    if (attempt.existing?.state === 'completed') core.receipts.put(attempt.existing);
    const nowMs = clock.now();
    const decision = decideClaim(attempt.existing, request.fingerprint, nowMs);
    switch (decision.action) {
      case 'conflict':
        return { answer: conflictAnswer(decision.entry) };
      case 'replay':
        return { answer: completedAnswer('replayed', decision.entry) };
      case 'wait':
        return {
          answer: {
            kind: 'in_flight',
            retryAfterMs: decision.retryAfterMs,
            leaseExpiresAt: decision.entry.leaseExpiresAt,
            firstSeenAt: decision.entry.firstSeenAt,
          },
        };
      case 'insert':
        break; // the row vanished while claiming: claim again
      case 'take_over': {
        const tookOver = decision.reason === 'lease_expired';
        // A takeover continues the same request: it was first seen when the dead worker took it.
        const firstSeenAt = tookOver ? decision.previous.firstSeenAt : nowMs;
        const taken = freshEntry(core, request, nowMs, firstSeenAt);
        if (await store.swap(versionOf(decision.previous), taken))
          return { claimed: taken, tookOver };
        break; // someone else wrote first: read again and decide on what they wrote
      }
    }
  }
  const cause = new OncelyError(
    'claim_contention',
    `could not claim key ${request.key}: it changed ${MAX_CLAIM_ROUNDS} times while claiming`,
  );
  return { answer: { kind: 'unavailable', stage: 'claim', cause } };
}
