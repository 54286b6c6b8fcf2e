import type { IdempotencyContext } from '../idempotency-middleware.js';

const contexts = new WeakMap<object, IdempotencyContext<unknown>>();

/** Links a framework request to its guarded context for the request's life. */
export function setRouteContext(request: object, context: IdempotencyContext<unknown>): void {
  contexts.set(request, context);
}

/**
 * The guarded request's context (scope, key, `sql`, `tx`, `claim.tookOver`), for a route behind
 * the Express or node:http adapter; undefined outside the ledger (a GET, a pass-through).
 */
export function idempotencyOf<Tx = unknown>(request: object): IdempotencyContext<Tx> | undefined {
  return contexts.get(request) as IdempotencyContext<Tx> | undefined;
}
