import {
  runDeferredWrites,
  type DeferredCommitInTransaction,
  type DeferredEffect,
} from './deferred-writes.js';
import { completedAnswer } from './ledger-answers.js';
import { heldAnswer, type LedgerCore } from './ledger-claim.js';
import { runUnclaimed } from './run-unclaimed.js';
import type { CompletedEntry } from './ledger-entry.js';
import type { ExecuteResult, LedgerRequest } from './ledger-result.js';

type ClaimedWay<Tx> = (
  request: LedgerRequest,
  effect: DeferredEffect<Tx>,
) => Promise<ExecuteResult>;

/** A deferred run of this process whose transaction is open: what its duplicates are told. */
interface Running {
  readonly fingerprint: string;
  readonly firstSeenAt: number;
}

/** Thrown by the claimed way's effect when it would run the route a second time; never escapes. */
const RUN_AGAIN = Symbol('run the route again');

/** Thrown inside the transaction only to roll it back; never escapes. */
class RolledBack {
  constructor(
    readonly why: 'found' | 'answered' | 'effect_failed',
    readonly detail?: unknown,
  ) {}
}

/**
 * The deferred way on a store whose deferred commit ends the effect's own transaction (the ORM
 * stores, DeferredCommit.inTransaction): no claim is committed first. The effect runs in the
 * store's transaction, given its handle; its deferred writes follow, and the key's row is the
 * transaction's last statement, added only if the key has none; then one commit. When the key
 * had a row (another process answered it, or holds it in flight) the transaction rolls back,
 * every write of the effect with it, and the claimed way answers: a replay, 422 or 409.
 *
 * A duplicate in this process while the transaction is open is answered at once as the claimed
 * way would answer it under a lease (409 in flight, 422 with another payload): this process's
 * own runs are its in-process lease. A duplicate in another process runs its effect, then waits
 * at the row for the first's commit (PostgreSQL: the key's advisory lock; SQLite: the write
 * lock), finds its row, rolls back and replays it.
 */
export function deferredInTransaction<Tx>(
  core: LedgerCore<Tx>,
  inTransaction: DeferredCommitInTransaction,
  claimedWay: ClaimedWay<Tx>,
): ClaimedWay<Tx> {
  const running = new Map<string, Running>();

  return async (request, effect) => {
    const held = heldAnswer(core, request);
    if (held !== undefined) return held;
    const identity = `${request.scope}\u001f${request.key}`;
    const first = running.get(identity);
    if (first !== undefined) return duplicateAnswer(core, request, first);
    const firstSeenAt = core.o.clock.now();
    running.set(identity, { fingerprint: request.fingerprint, firstSeenAt });
    try {
      const answer = await runInTransaction(core, inTransaction, request, effect, firstSeenAt);
      return answer ?? (await answerFromRow(core, claimedWay, request));
    } finally {
      running.delete(identity);
    }
  };
}

/**
 * The claimed way for a key that had a row: a replay, 422 or 409. The route ran once already (its
 * request's body is read, its response begun) and cannot run again: when the claimed way would run
 * it (the row was spent: a receipt past retention not yet swept, a lease that ran out), the key is
 * given back and the request answered 409 with no delay; its retry runs on the free key.
 */
async function answerFromRow<Tx>(
  core: LedgerCore<Tx>,
  claimedWay: ClaimedWay<Tx>,
  request: LedgerRequest,
): Promise<ExecuteResult> {
  try {
    return await claimedWay(request, () => Promise.reject(RUN_AGAIN));
  } catch (error) {
    if (error !== RUN_AGAIN) throw error;
    const nowMs = core.o.clock.now();
    return { kind: 'in_flight', retryAfterMs: 0, leaseExpiresAt: nowMs, firstSeenAt: nowMs };
  }
}

/** One transaction: the effect, its writes, the row. Undefined when the key had a row. */
async function runInTransaction<Tx>(
  core: LedgerCore<Tx>,
  inTransaction: DeferredCommitInTransaction,
  request: LedgerRequest,
  effect: DeferredEffect<Tx>,
  firstSeenAt: number,
): Promise<ExecuteResult | undefined> {
  const { store } = core.o;
  let entry: CompletedEntry;
  try {
    await inTransaction.prepare(firstSeenAt);
  } catch (cause) {
    return { kind: 'unavailable', stage: 'claim', cause };
  }
  try {
    entry = await store.transaction(async (tx) => {
      let made: Awaited<ReturnType<typeof runUnclaimed>>;
      try {
        made = await runUnclaimed(core, request, (claim) => effect(claim, tx), firstSeenAt);
        if ('entry' in made && made.writes.length > 0)
          await runDeferredWrites(store.sql(tx), made.writes);
      } catch (error) {
        throw new RolledBack('effect_failed', error);
      }
      // Not stored (a 5xx): its writes roll back, as on the claimed way.
      if ('answer' in made) throw new RolledBack('answered', made.answer);
      if (!(await inTransaction.commit(tx, made.entry))) throw new RolledBack('found');
      return made.entry;
    });
  } catch (error) {
    if (!(error instanceof RolledBack))
      return { kind: 'unavailable', stage: 'transaction', cause: error };
    if (error.why === 'found') return undefined;
    if (error.why === 'answered') return error.detail as ExecuteResult;
    // The effect's statement failed with the database: unavailable (503), not the effect's bug.
    if (store.isUnavailable(error.detail))
      return { kind: 'unavailable', stage: 'transaction', cause: error.detail };
    throw error.detail;
  }
  core.receipts.put(entry);
  return completedAnswer('executed', entry);
}

/** A duplicate of a run of this process still in its transaction: 409, or 422 for another payload. */
function duplicateAnswer<Tx>(
  { o }: LedgerCore<Tx>,
  request: LedgerRequest,
  first: Running,
): ExecuteResult {
  const { firstSeenAt } = first;
  if (first.fingerprint !== request.fingerprint)
    return { kind: 'conflict', state: 'in_flight', firstSeenAt };
  // No lease is written: the one a claim would have taken, from the first's start.
  const leaseExpiresAt = firstSeenAt + o.leaseMs;
  const retryAfterMs = Math.max(0, leaseExpiresAt - o.clock.now());
  return { kind: 'in_flight', retryAfterMs, leaseExpiresAt, firstSeenAt };
}
