import { InvalidOptionError, OncelyError } from '../contract/errors.js';
import { validateKey } from '../contract/idempotency-key.js';
import type { Receipt } from '../contract/receipt.js';
import { decideClaim } from './decide-claim.js';
import { tombstoneOf, versionOf, type CompletedEntry, type InFlightEntry } from './ledger-entry.js';
import {
  resolveLedgerOptions,
  type LedgerOptions,
  type ResolvedLedgerOptions,
} from './ledger-options.js';
import type { Claim, ExecuteResult, LedgerRequest, LookupResult } from './ledger-result.js';
import type { LedgerStore, SweepResult } from './ledger-store.js';
import { createLedgerSweeper, type SweepProgress } from './ledger-sweeper.js';
import { normalizeReceipt } from './normalize-receipt.js';
import { LeaseHeartbeat } from './lease-heartbeat.js';
import { ReceiptCache } from './receipt-cache.js';
import { storeReady } from './store-ready.js';
import {
  DeferredWriteError,
  runDeferredWrites,
  type DeferredEffect,
  type DeferredOutcome,
  type DeferredWrite,
} from './deferred-writes.js';

/** The effect: the caller's work, given the store's transaction handle for its own writes. */
export type Effect<Tx> = (tx: Tx, claim: Claim) => Receipt | Promise<Receipt>;

export interface Ledger<Tx> {
  readonly store: LedgerStore<Tx>;
  readonly options: ResolvedLedgerOptions<Tx>;
  /**
   * Answers one request: claims its key, runs `effect` and writes the receipt in one store
   * transaction, or answers from what the key already holds. Never throws for the store's sake
   * (that is `unavailable`); rethrows the effect's own error after rolling it back and
   * releasing the key. Throws InvalidKeyError / InvalidOptionError for a malformed request.
   */
  execute(request: LedgerRequest, effect: Effect<Tx>): Promise<ExecuteResult>;
  /**
   * Answers one request whose effect defers its writes and does nothing else (deferred-writes.ts).
   * On a store that commits them at once (PostgreSQL), the effect runs first, without a claim or
   * a lease, and its receipt and writes commit in one transaction if the key is still free; a
   * concurrent duplicate's effect runs too, but its writes never commit and it answers as a
   * replay. When the key has a row, and on other stores, it goes the claimed way of `execute`,
   * the writes run in the claimed transaction.
   */
  executeDeferred(request: LedgerRequest, effect: DeferredEffect): Promise<ExecuteResult>;
  /** The read-only status lookup by (scope, key). Purges what it finds expired. */
  lookup(scope: string, key: string): Promise<LookupResult>;
  /**
   * Turns receipts past retention into tombstones and deletes old tombstones, in bounded steps
   * (sweepBatchRows each, sweepPauseMs apart). Aborting `signal` stops between two steps; the
   * next call resumes at the oldest row still due.
   */
  purgeExpired(signal?: AbortSignal): Promise<SweepResult>;
  /** The current or last purge: rows left, rows done, steps taken (a plain getter for gauges). */
  sweepProgress(): SweepProgress;
  /**
   * Opens the store and sets up its table now; rejects with a `store_unavailable` OncelyError
   * naming the cause (bad path, bad URL, server down). Await it before listening.
   */
  ready(): Promise<void>;
}

/** Claim rounds lost to other workers' concurrent writes before giving up as unavailable. */
const MAX_CLAIM_ROUNDS = 8;

/** Thrown inside the transaction only to roll it back; never escapes `execute`. */
class Rollback {
  constructor(
    readonly reason: 'lease_lost' | 'not_stored' | 'effect_failed',
    readonly detail?: unknown,
  ) {}
}

type ClaimOutcome =
  | { readonly claimed: InFlightEntry; readonly tookOver: boolean }
  | { readonly answer: ExecuteResult };

export function createLedger<Tx>(options: LedgerOptions<Tx>): Ledger<Tx> {
  const o = resolveLedgerOptions(options);
  const { store, clock } = o;
  const receipts = new ReceiptCache(o.receiptCacheBytes);
  const heartbeat = new LeaseHeartbeat(store, clock, o.heartbeatMs, o.leaseMs);
  /** The store's commit of a deferred effect without a claim, if it has one (PostgreSQL). */
  const commitAtOnce = store.commitDeferred?.bind(store);

  /** A fresh in-flight entry for this worker; a takeover keeps the first sighting of the request. */
  function freshEntry(request: LedgerRequest, nowMs: number, firstSeenAt: number): InFlightEntry {
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
  function heldAnswer(request: LedgerRequest): ExecuteResult | undefined {
    const held = receipts.get(request.scope, request.key, clock.now());
    if (held === undefined) return undefined;
    return held.fingerprint === request.fingerprint
      ? completedAnswer('replayed', held)
      : conflictAnswer(held);
  }

  async function claim(request: LedgerRequest): Promise<ClaimOutcome> {
    const held = heldAnswer(request);
    if (held !== undefined) return { answer: held };
    for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      // One store call looks the key up and claims it when free: a new key costs one statement.
      const fresh = freshEntry(request, clock.now(), clock.now());
      const attempt = await store.claim(fresh);
      if (attempt.won) return { claimed: fresh, tookOver: false };
      if (attempt.existing?.state === 'completed') receipts.put(attempt.existing);
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
          const taken = freshEntry(
            request,
            nowMs,
            tookOver ? decision.previous.firstSeenAt : nowMs,
          );
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

  async function execute(request: LedgerRequest, effect: Effect<Tx>): Promise<ExecuteResult> {
    checkRequest(request);
    if (typeof effect !== 'function')
      throw new InvalidOptionError('effect', effect, 'a function (tx, claim) => Receipt');

    let outcome: ClaimOutcome;
    try {
      outcome = await claim(request);
    } catch (cause) {
      return { kind: 'unavailable', stage: 'claim', cause };
    }
    if ('answer' in outcome) return outcome.answer;
    const owned = outcome.claimed;
    const version = versionOf(owned);
    const claimInfo: Claim = {
      scope: owned.scope,
      key: owned.key,
      fingerprint: owned.fingerprint,
      firstSeenAt: owned.firstSeenAt,
      leaseExpiresAt: owned.leaseExpiresAt,
      tookOver: outcome.tookOver,
    };

    const stopHeartbeat = heartbeat.hold(version);
    try {
      const completed = await store.transaction(async (tx) => {
        let produced: Receipt | string;
        try {
          produced = normalizeReceipt(await effect(tx, claimInfo));
        } catch (error) {
          throw new Rollback('effect_failed', error);
        }
        if (typeof produced === 'string')
          throw new Rollback('effect_failed', new TypeError(produced));
        if (!o.shouldStore(produced)) throw new Rollback('not_stored', produced);
        const nowMs = clock.now();
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
        if (!(await store.complete(tx, version, entry))) throw new Rollback('lease_lost');
        return entry;
      });
      receipts.put(completed);
      return completedAnswer('executed', completed);
    } catch (error) {
      if (error instanceof Rollback && error.reason === 'lease_lost') {
        return {
          kind: 'lease_lost',
          retryAfterMs: Math.max(0, owned.leaseExpiresAt - clock.now()),
        };
      }
      // Rolled back: give the key back so a retry runs again. If the store is down the release
      // fails too; then the lease runs out instead, in leaseMs rather than retentionMs.
      await store.remove(version).catch(() => false);
      if (error instanceof Rollback && error.reason === 'effect_failed') {
        // The effect's statement failed with the database (a stopped server, a full disk): the
        // ledger is unavailable, and the client should come back later, not be told of a bug.
        if (store.isUnavailable?.(error.detail))
          return { kind: 'unavailable', stage: 'transaction', cause: error.detail };
        throw error.detail;
      }
      if (error instanceof Rollback && error.reason === 'not_stored')
        return { kind: 'not_stored', receipt: error.detail as Receipt };
      return { kind: 'unavailable', stage: 'transaction', cause: error };
    } finally {
      stopHeartbeat();
    }
  }

  async function executeDeferred(
    request: LedgerRequest,
    effect: DeferredEffect,
  ): Promise<ExecuteResult> {
    checkRequest(request);
    if (typeof effect !== 'function')
      throw new InvalidOptionError('effect', effect, 'a function (claim) => { receipt, writes }');
    if (commitAtOnce === undefined) return execute(request, claimedDeferred(effect));
    const held = heldAnswer(request);
    if (held !== undefined) return held;

    const { scope, key, fingerprint } = request;
    const firstSeenAt = clock.now();
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
    if (!o.shouldStore(receipt)) return { kind: 'not_stored', receipt };
    const completedAt = clock.now();
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
    let committed: boolean;
    try {
      committed = await commitAtOnce(entry, writes);
    } catch (error) {
      if (error instanceof DeferredWriteError) throw error;
      return { kind: 'unavailable', stage: 'transaction', cause: error };
    }
    if (committed) {
      receipts.put(entry);
      return completedAnswer('executed', entry);
    }
    // The key has a row: a replay, a conflict, a request in flight, or an expired key to take
    // over. The claimed way decides; if it runs the effect, the answer is the one already made.
    return execute(request, (tx) => withWrites(tx, writes, receipt));
  }

  /** A deferred effect run the claimed way: after the claim, its writes in the transaction. */
  function claimedDeferred(effect: DeferredEffect): Effect<Tx> {
    return async (tx, claimed) => {
      const { receipt, writes } = checkDeferredOutcome(await effect(claimed));
      return withWrites(tx, writes, receipt);
    };
  }

  async function withWrites(
    tx: Tx,
    writes: readonly DeferredWrite[],
    receipt: Receipt,
  ): Promise<Receipt> {
    if (writes.length === 0) return receipt;
    if (store.sql === undefined)
      throw new OncelyError('no_sql', `the ${store.name} store has no SQL for deferred writes`);
    await runDeferredWrites(store.sql(tx), writes);
    return receipt;
  }

  async function lookup(scope: string, key: string): Promise<LookupResult> {
    checkRequest({ scope, key, fingerprint: '-' });
    try {
      const entry = await store.get(scope, key);
      if (entry === undefined) return { kind: 'never_seen' };
      const nowMs = clock.now();
      if (entry.state === 'expired') {
        if (entry.expiresAt > nowMs)
          return expiredAnswer(
            entry.fingerprint,
            entry.firstSeenAt,
            entry.expiredAt,
            entry.completedAt,
          );
        await store.remove(versionOf(entry)).catch(() => false); // purge on access: the tombstone's own time is over
        return { kind: 'never_seen' };
      }
      if (entry.expiresAt <= nowMs) {
        const tombstone = tombstoneOf(entry, o.tombstoneMs);
        await store.swap(versionOf(entry), tombstone).catch(() => false); // purge on access; losing this race is harmless
        return expiredAnswer(
          entry.fingerprint,
          entry.firstSeenAt,
          tombstone.expiredAt,
          tombstone.completedAt,
        );
      }
      if (entry.state === 'completed') {
        const { receipt, fingerprint, firstSeenAt, completedAt, expiresAt } = entry;
        return { kind: 'found', receipt, fingerprint, firstSeenAt, completedAt, expiresAt };
      }
      return {
        kind: 'in_flight',
        fingerprint: entry.fingerprint,
        firstSeenAt: entry.firstSeenAt,
        leaseExpiresAt: entry.leaseExpiresAt,
        leaseExpired: entry.leaseExpiresAt <= nowMs,
      };
    } catch (cause) {
      return { kind: 'unavailable', cause };
    }
  }

  const sweeper = createLedgerSweeper({
    store,
    clock,
    tombstoneMs: o.tombstoneMs,
    batchRows: o.sweepBatchRows,
    stepMs: o.sweepStepMs,
    pauseMs: o.sweepPauseMs,
  });

  return {
    store,
    options: o,
    execute,
    executeDeferred,
    lookup,
    purgeExpired: (signal) => sweeper.run(signal),
    sweepProgress: () => sweeper.progress,
    ready: () => storeReady(store),
  };
}

function completedAnswer(kind: 'executed' | 'replayed', entry: CompletedEntry): ExecuteResult {
  return {
    kind,
    receipt: entry.receipt,
    firstSeenAt: entry.firstSeenAt,
    completedAt: entry.completedAt,
    expiresAt: entry.expiresAt,
  };
}

function conflictAnswer(entry: InFlightEntry | CompletedEntry): ExecuteResult {
  return { kind: 'conflict', state: entry.state, firstSeenAt: entry.firstSeenAt };
}

function expiredAnswer(
  fingerprint: string,
  firstSeenAt: number,
  expiredAt: number,
  completedAt: number | undefined,
): LookupResult {
  return { kind: 'expired', fingerprint, firstSeenAt, expiredAt, completedAt };
}

/** The public edge of the ledger: a malformed request is a programming error, thrown at once. */
function checkRequest(request: LedgerRequest): void {
  if (typeof request !== 'object' || request === null)
    throw new InvalidOptionError('request', request, 'an object {scope, key, fingerprint}');
  if (typeof request.scope !== 'string' || request.scope === '')
    throw new InvalidOptionError('scope', request.scope, 'a non-empty string');
  validateKey(request.key);
  if (typeof request.fingerprint !== 'string' || request.fingerprint === '') {
    throw new InvalidOptionError('fingerprint', request.fingerprint, 'a non-empty string');
  }
}

/** A deferred effect's answer, its receipt normalized; a malformed one is the effect's error. */
function checkDeferredOutcome(outcome: DeferredOutcome): {
  receipt: Receipt;
  writes: readonly DeferredWrite[];
} {
  const receipt = normalizeReceipt(outcome?.receipt);
  if (typeof receipt === 'string') throw new TypeError(receipt);
  if (!Array.isArray(outcome.writes))
    throw new TypeError('a deferred effect answers { receipt, writes } with writes an array');
  return { receipt, writes: outcome.writes };
}
