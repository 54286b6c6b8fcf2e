import { OncelyError } from '../contract/errors.js';
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
    ? o.ledger.executeDeferred(request, async (claim, tx) => {
        // An ORM store runs the handler in its transaction (tx): its statements are live there.
        const sql =
          tx === undefined ? new DeferredOnlySql(o.ledger.store.name) : new ClaimedSql(sqlOf(tx));
        const context =
          tx === undefined
            ? new DeferredContext<Tx, V>(admitted, sql, key, claim)
            : new InTransactionContext(admitted, sql, key, claim, tx);
        const receipt = await respond(context);
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

/** What every deferred route's context holds: the admitted request, its key, its claim, `sql`. */
abstract class UnclaimedContext<V> {
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
}

/**
 * A deferred route's context: no transaction is open while its handler runs, so reading `tx`
 * throws, saying why. A class: its getter lives on the prototype, so a handler that spreads its
 * context does not trip over it, and the object keeps one shape.
 */
class DeferredContext<Tx, V> extends UnclaimedContext<V> implements IdempotencyContext<Tx, V> {
  get tx(): Tx {
    throw noTransaction();
  }

  step(): Promise<never> {
    return Promise.reject(noTransaction());
  }
}

/**
 * A deferred route's context on a store that runs it in its transaction (an ORM store): `tx` and
 * `sql` are live, but no key is claimed, so there is no step to resume from.
 */
class InTransactionContext<Tx, V> extends UnclaimedContext<V> implements IdempotencyContext<Tx, V> {
  constructor(
    admitted: AdmittedRequest<V>,
    sql: GuardSql,
    key: string,
    claim: Claim,
    readonly tx: Tx,
  ) {
    super(admitted, sql, key, claim);
  }

  step(): Promise<never> {
    return Promise.reject(
      new OncelyError(
        'steps_need_claim',
        "context.step() needs a claimed key; this route defers its writes (writes: 'deferred'): give a route with steps writes: 'claimed'",
      ),
    );
  }
}
