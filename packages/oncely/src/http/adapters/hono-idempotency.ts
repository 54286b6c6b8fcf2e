import type { Context, MiddlewareHandler } from 'hono';
import type { IdempotencyContext } from '../idempotency-middleware.js';
import type { AdapterOptions } from './adapter-options.js';
import { createFetchGuard } from './fetch-guard.js';

export type HonoIdempotencyOptions<Tx, V = unknown> = AdapterOptions<Tx, Context, V>;

/** Hono variables the middleware sets: `c.get('idempotency')?.sql` in a route. */
interface IdempotencyVariables<Tx, V> {
  idempotency: IdempotencyContext<Tx, V> | undefined;
}

/**
 * Hono middleware with the Express middleware's behaviour, from options:
 *
 * ```ts
 * app.post('/orders', idempotency({ ledger, scopeOf: (c) => c.get('user')?.id }), async (c) =>
 *   c.json(createOrder(await c.req.json()), 201));
 * ```
 * `scopeOf` gets Hono's Context (`c.get('user')` from an auth middleware, `c.req.param()`); the
 * handler reads the body as usual and finds the ledger's `sql`/`tx` (and the `value` of
 * `validate`) in `c.get('idempotency')`. Downstream handlers' response becomes the receipt.
 * Hono speaks Fetch, so this is the Fetch adapter's guard (fetch-guard.ts) with Hono's `next()`
 * as the route. (Only Hono's types are imported: Hono stays a dependency of the app, not of oncely.)
 */
export function idempotency<Tx, V = unknown>(
  options: HonoIdempotencyOptions<Tx, V>,
): MiddlewareHandler<{ Variables: IdempotencyVariables<Tx, V> }> {
  const guard = createFetchGuard<Tx, V, Context>(options);
  return async (c, next) => {
    const response = await guard(c.req.raw, c as unknown as Context, async (request, context) => {
      c.req.raw = request; // the guard read the body; handlers read this identical copy
      c.set('idempotency', context);
      await next();
      return c.res;
    });
    // Replace rather than merge: Hono's `c.res =` would otherwise copy the consumed response's headers.
    c.res = undefined as unknown as Response;
    c.res = response;
  };
}
