import type { Ledger } from './ledger.js';
import type { Claim, ExecuteKind, ExecuteResult, LedgerRequest } from './ledger-result.js';

/** What the ledger decided for one request, told to an observer after `execute` answered. */
export interface LedgerDecision {
  /**
   * What `execute` answered (executed = new, replayed, conflict, in_flight, lease_lost,
   * not_stored, unavailable), or `effect_failed` when the effect threw: rolled back, key released.
   */
  readonly kind: ExecuteKind | 'effect_failed';
  readonly scope: string;
  readonly key: string;
  /** True when this request took over a key whose earlier worker's lease had expired. */
  readonly tookOver: boolean;
  /** How long the effect ran (on the ledger's clock); undefined when no effect ran. */
  readonly effectMs: number | undefined;
}

export type LedgerObserver = (decision: LedgerDecision) => void;

/**
 * The same ledger, telling `observer` each decision (metrics, tracing, logs). The effect is timed
 * on the ledger's own clock. An observer that throws is ignored: watching must never fail a
 * request. An effect that throws is reported as `effect_failed` and rethrown.
 */
export function observeLedger<Tx>(ledger: Ledger<Tx>, observer: LedgerObserver): Ledger<Tx> {
  const clock = ledger.options.clock;
  const tell = (decision: LedgerDecision): void => {
    try {
      observer(decision);
    } catch {
      // An observer's bug is not the request's failure.
    }
  };
  /** Runs one request's `run`, timing its effect through `time`, and tells what it decided. */
  async function watch(
    request: LedgerRequest,
    run: (
      time: <T>(claim: Claim, effect: () => T | Promise<T>) => Promise<T>,
    ) => Promise<ExecuteResult>,
  ): Promise<ExecuteResult> {
    let tookOver = false;
    let effectMs: number | undefined;
    const time = async <T>(claim: Claim, effect: () => T | Promise<T>): Promise<T> => {
      tookOver = claim.tookOver;
      const startedAt = clock.now();
      try {
        return await effect();
      } finally {
        effectMs = clock.now() - startedAt;
      }
    };
    const base = { scope: request.scope, key: request.key };
    try {
      const result = await run(time);
      tell({ ...base, kind: result.kind, tookOver, effectMs });
      return result;
    } catch (error) {
      tell({ ...base, kind: 'effect_failed', tookOver, effectMs });
      throw error;
    }
  }

  return {
    ...ledger,
    execute: (request, effect) =>
      watch(request, (time) =>
        ledger.execute(request, (tx, claim, step) => time(claim, () => effect(tx, claim, step))),
      ),
    // A deferred effect's time is its handler's: its writes run at the commit, after it.
    executeDeferred: (request, effect) =>
      watch(request, (time) =>
        ledger.executeDeferred(request, (claim, tx) => time(claim, () => effect(claim, tx))),
      ),
  };
}
