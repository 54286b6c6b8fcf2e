import type { LedgerStore } from '../../ledger/ledger-store.js';
import type { IdempotencyContext } from '../idempotency-middleware.js';

const contexts = new WeakMap<object, IdempotencyContext<unknown>>();

/** Links a framework request to its guarded context for the request's life. */
export function setRouteContext(request: object, context: IdempotencyContext<unknown>): void {
  contexts.set(request, context);
}

/**
 * The guarded request's context (scope, key, `sql`, `tx`, `claim.tookOver`, the `value` of
 * `validate`), for a route behind the Express, Fastify, node:http or Fetch adapter; undefined
 * outside the ledger (a GET, a pass-through). Given the ledger too, `tx` has its store's type: on an ORM's
 * store (oncely/orm), the ORM's own transaction object, such as Kysely's `Transaction<DB>`.
 * The ledger is read for its type only.
 */
export function idempotencyOf<Tx = unknown, V = unknown>(
  request: object,
  _ledger?: { readonly store: LedgerStore<Tx> },
): IdempotencyContext<Tx, V> | undefined {
  return contexts.get(request) as IdempotencyContext<Tx, V> | undefined;
}
