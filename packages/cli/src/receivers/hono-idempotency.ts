import type { MiddlewareHandler } from 'hono';
import type { IdempotencyContext, IdempotencyMiddleware } from 'oncely/http';

/** Hono variables the guard sets: `c.get('idempotency')?.sql` in a route. */
export interface IdempotencyVariables<Tx, V = unknown> {
  idempotency: IdempotencyContext<Tx, V> | undefined;
}

/**
 * The receivers' Hono guard: a web-standard middleware built with their own `validate` (which
 * `oncely/hono`'s idempotency() does not take) in front of Hono routes. The route's response
 * becomes the receipt.
 */
export function honoIdempotency<Tx, V = unknown>(
  middleware: IdempotencyMiddleware<Tx, V>,
): MiddlewareHandler<{ Variables: IdempotencyVariables<Tx, V> }> {
  return async (c, next) => {
    const response = await middleware(c.req.raw, async (request, context) => {
      c.req.raw = request; // the middleware read the body; routes read this identical copy
      c.set('idempotency', context);
      await next();
      return c.res;
    });
    // Replace rather than merge: Hono's `c.res =` would otherwise copy the consumed response's headers.
    c.res = undefined as unknown as Response;
    c.res = response;
  };
}
