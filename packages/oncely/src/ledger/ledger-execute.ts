import { InvalidOptionError } from '../contract/errors.js';
import type { Receipt } from '../contract/receipt.js';
import { checkRequest, completedAnswer } from './ledger-answers.js';
import { claimOrAnswer, type ClaimOutcome, type LedgerCore } from './ledger-claim.js';
import { versionOf, type CompletedEntry, type InFlightEntry } from './ledger-entry.js';
import type { ResolvedLedgerOptions } from './ledger-options.js';
import type { Claim, ExecuteResult, LedgerRequest } from './ledger-result.js';
import type { LeaseHeartbeat } from './lease-heartbeat.js';
import { normalizeReceipt } from './normalize-receipt.js';
import { StepRunner, type Step } from './steps.js';

/**
 * The effect: the caller's work, given the store's transaction handle for its own writes, and
 * `step` for the work that must commit before the rest (a call to another service): each step
 * is a recovery point a retry resumes from (steps.ts, docs/steps.md).
 */
export type Effect<Tx> = (tx: Tx, claim: Claim, step: Step<Tx>) => Receipt | Promise<Receipt>;

/** Thrown inside the transaction only to roll it back; never escapes `execute`. */
class Rollback {
  constructor(
    readonly reason: 'lease_lost' | 'not_stored' | 'effect_failed',
    readonly detail?: unknown,
  ) {}
}

/** The claimed way: claim the key, run the effect and write the receipt in one transaction. */
export async function executeClaimed<Tx>(
  core: LedgerCore<Tx>,
  heartbeat: LeaseHeartbeat,
  request: LedgerRequest,
  effect: Effect<Tx>,
): Promise<ExecuteResult> {
  checkRequest(request);
  if (typeof effect !== 'function')
    throw new InvalidOptionError('effect', effect, 'a function (tx, claim) => Receipt');
  let outcome: ClaimOutcome;
  try {
    outcome = await claimOrAnswer(core, request);
  } catch (cause) {
    return { kind: 'unavailable', stage: 'claim', cause };
  }
  if ('answer' in outcome) return outcome.answer;
  const owned = outcome.claimed;
  const version = versionOf(owned);
  const stopHeartbeat = heartbeat.hold(version);
  const steps = new StepRunner(core.o, owned, outcome.tookOver);
  try {
    const completed = await core.o.store.transaction((tx) =>
      runEffect(core, tx, owned, outcome.tookOver, steps, (t, claim) =>
        effect(t, claim, steps.beside(t)),
      ),
    );
    if (core.keepWritten) core.receipts.put(completed); // else kept once a retry reads it
    return completedAnswer('executed', completed);
  } catch (error) {
    // No beat may renew the lease after it is given back below.
    stopHeartbeat();
    return await afterRollback(core, owned, error, steps.mayHaveSteps);
  } finally {
    stopHeartbeat();
  }
}

/** Inside the transaction: the effect, then its receipt in place of the in-flight row. */
async function runEffect<Tx>(
  { o }: LedgerCore<Tx>,
  tx: Tx,
  owned: InFlightEntry,
  tookOver: boolean,
  steps: StepRunner<Tx>,
  effect: (tx: Tx, claim: Claim) => Receipt | Promise<Receipt>,
): Promise<CompletedEntry> {
  const claim: Claim = {
    scope: owned.scope,
    key: owned.key,
    fingerprint: owned.fingerprint,
    firstSeenAt: owned.firstSeenAt,
    leaseExpiresAt: owned.leaseExpiresAt,
    tookOver,
  };
  let produced: Receipt | string;
  try {
    produced = normalizeReceipt(await effect(tx, claim));
  } catch (error) {
    throw new Rollback('effect_failed', error);
  }
  if (typeof produced === 'string') throw new Rollback('effect_failed', new TypeError(produced));
  if (!o.shouldStore(produced)) throw new Rollback('not_stored', produced);
  // The run's recovery points go (or stay, by the store) with the receipt that ends it.
  await steps.beforeReceipt(tx);
  const nowMs = o.clock.now();
  const entry: CompletedEntry = {
    scope: owned.scope,
    key: owned.key,
    fingerprint: owned.fingerprint,
    state: 'completed',
    token: owned.token,
    firstSeenAt: owned.firstSeenAt,
    completedAt: nowMs,
    expiresAt: nowMs + o.retentionMs,
    receipt: produced,
  };
  // The receipt joins the effect's transaction: both commit, or neither (docs/origins.md,
  // "The notes' retry contract"). The compare-and-swap on the owner token refuses it if the
  // key was taken over meanwhile.
  if (!(await o.store.complete(tx, versionOf(owned), entry))) throw new Rollback('lease_lost');
  return entry;
}

/** What a rolled-back transaction answers; the key is given back unless another worker has it. */
async function afterRollback<Tx>(
  { o }: LedgerCore<Tx>,
  owned: InFlightEntry,
  error: unknown,
  keepRun: boolean,
): Promise<ExecuteResult> {
  if (error instanceof Rollback && error.reason === 'lease_lost') {
    return { kind: 'lease_lost', retryAfterMs: Math.max(0, owned.leaseExpiresAt - o.clock.now()) };
  }
  // Rolled back: give the key back so a retry runs again. If the store is down the release
  // fails too; then the lease runs out instead, in leaseMs rather than retentionMs.
  await releaseKey(o, owned, keepRun).catch(() => false);
  if (error instanceof Rollback && error.reason === 'effect_failed') {
    // The effect's statement failed with the database (a stopped server, a full disk): the
    // ledger is unavailable, and the client should come back later, not be told of a bug.
    if (o.store.isUnavailable(error.detail))
      return { kind: 'unavailable', stage: 'transaction', cause: error.detail };
    throw error.detail;
  }
  if (error instanceof Rollback && error.reason === 'not_stored')
    return { kind: 'not_stored', receipt: error.detail as Receipt };
  return { kind: 'unavailable', stage: 'transaction', cause: error };
}

/**
 * Gives the key back. A run with recovery points keeps its row, in flight with its lease over,
 * so the next retry of the same request takes it over and resumes from its steps (a different
 * payload still gets 422); a new token, so a heartbeat still on its way matches nothing. A run
 * without steps deletes the row, as if the request had never come.
 */
function releaseKey<Tx>(
  o: ResolvedLedgerOptions<Tx>,
  owned: InFlightEntry,
  keepRun: boolean,
): Promise<boolean> {
  const version = versionOf(owned);
  if (!keepRun) return o.store.remove(version);
  const released: InFlightEntry = {
    ...owned,
    token: o.generateToken(),
    leaseExpiresAt: o.clock.now(),
  };
  return o.store.swap(version, released);
}
