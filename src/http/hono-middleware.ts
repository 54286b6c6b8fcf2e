import type { MiddlewareHandler } from 'hono';
import type { IdempotencyContext, IdempotencyMiddleware } from './idempotency-middleware.js';

/** Hono variables set by {@link honoIdempotency}: `c.get('idempotency')?.tx` in a handler. */
export interface IdempotencyVariables<Tx, V = unknown> {
  idempotency: IdempotencyContext<Tx, V> | undefined;
}

/**
 * The bridge under `oncely/hono`'s idempotency(): `honoIdempotency(middleware)` in front of routes. Downstream handlers read the
 * transaction handle with `c.get('idempotency')`; their response becomes the receipt. (Only
 * Hono's types are imported: Hono stays a dependency of the app, not of oncely.)
 */
export function honoIdempotency<Tx, V = unknown>(
  middleware: IdempotencyMiddleware<Tx, V>,
): MiddlewareHandler<{ Variables: IdempotencyVariables<Tx, V> }> {
  return async (c, next) => {
    const response = await middleware(c.req.raw, async (request, context) => {
      c.req.raw = request; // the middleware read the body; handlers read this identical copy
      c.set('idempotency', context);
      await next();
      return c.res;
    });
    // Replace rather than merge: Hono's `c.res =` would otherwise copy the consumed response's headers.
    c.res = undefined as unknown as Response;
    c.res = response;
  };
}
