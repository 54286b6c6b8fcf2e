import type { Receipt } from '../contract/receipt.js';
import { runDeferredWrites } from '../ledger/deferred-writes.js';
import type { Claim, ExecuteResult } from '../ledger/ledger-result.js';
import type { SqlHandle } from '../ledger/sql-handle.js';
import { ClaimedSql, DeferredOnlySql, noTransaction, type GuardSql } from './guard-sql.js';
import type { IdempotencyContext } from './idempotency-guard.js';
import type { ResolvedIdempotencyOptions } from './idempotency-options.js';
import type { AdmittedRequest } from './request-validation.js';

/**
 * Steps 5 and 6: the handler run by the ledger under the claim, its SQL in the claim's transaction;
 * with `writes: 'deferred'`, its writes kept and run in the commit's.
 */
export function executeInLedger<Tx, V>(
  o: ResolvedIdempotencyOptions<Tx, V>,
  sqlOf: (tx: Tx) => SqlHandle,
  request: Parameters<ResolvedIdempotencyOptions<Tx, V>['ledger']['execute']>[0],
  admitted: AdmittedRequest<V>,
  respond: (context: IdempotencyContext<Tx, V>) => Promise<Receipt>,
): Promise<ExecuteResult> {
  const { key } = request;
  return o.writes === 'deferred'
    ? o.ledger.executeDeferred(request, async (claim) => {
        const sql = new DeferredOnlySql(o.ledger.store.name);
        const receipt = await respond(new DeferredContext(admitted, sql, key, claim));
        return { receipt, writes: sql.close() };
      })
    : o.ledger.execute(request, async (tx, claim, step) => {
        const handle = sqlOf(tx);
        const sql = new ClaimedSql(handle);
        // Named fields, one fixed shape (a spread of `admitted` made a new one each time).
        const receipt = await respond({
          scope: admitted.scope,
          body: admitted.body,
          value: admitted.value,
          tx,
          sql,
          key,
          claim,
          step: sql.stepsBefore(step),
        });
        const writes = sql.close();
        if (writes.length > 0) await runDeferredWrites(handle, writes);
        return receipt;
      });
}

/**
 * A deferred route's context: no transaction is open while its handler runs, so reading `tx`
 * throws, saying why. A class: its getter lives on the prototype, so a handler that spreads its
 * context does not trip over it, and the object keeps one shape.
 */
class DeferredContext<Tx, V> implements IdempotencyContext<Tx, V> {
  readonly scope: string;
  readonly body: Uint8Array;
  readonly value: V;

  constructor(
    admitted: AdmittedRequest<V>,
    readonly sql: GuardSql,
    readonly key: string,
    readonly claim: Claim,
  ) {
    this.scope = admitted.scope;
    this.body = admitted.body;
    this.value = admitted.value;
  }

  get tx(): Tx {
    throw noTransaction();
  }

  step(): Promise<never> {
    return Promise.reject(noTransaction());
  }
}
