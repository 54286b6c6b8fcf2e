import type { Context, MiddlewareHandler } from 'hono';
import { createIdempotencyMiddleware, type IdempotencyContext } from '../idempotency-middleware.js';
import { webOptions, type AdapterOptions } from './adapter-options.js';

export type HonoIdempotencyOptions<Tx> = AdapterOptions<Tx, Context>;

/** Hono variables the middleware sets: `c.get('idempotency')?.sql` in a route. */
interface IdempotencyVariables<Tx> {
  idempotency: IdempotencyContext<Tx> | undefined;
}

/**
 * Hono middleware with the Express middleware's behaviour, from options:
 *
 * ```ts
 * app.post('/orders', idempotency({ ledger, scopeOf: (c) => c.get('user')?.id }), async (c) =>
 *   c.json(createOrder(await c.req.json()), 201));
 * ```
 * `scopeOf` gets Hono's Context (`c.get('user')` from an auth middleware, `c.req.param()`); the
 * handler reads the body as usual and finds the ledger's `sql`/`tx` in `c.get('idempotency')`.
 * Downstream handlers' response becomes the receipt. (Only Hono's types are imported: Hono stays
 * a dependency of the app, not of oncely.)
 */
export function idempotency<Tx>(
  options: HonoIdempotencyOptions<Tx>,
): MiddlewareHandler<{ Variables: IdempotencyVariables<Tx> }> {
  const origins = new WeakMap<Request, Context>();
  const middleware = createIdempotencyMiddleware<Tx>(webOptions(options, origins));
  return async (c, next) => {
    origins.set(c.req.raw, c as unknown as Context);
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
