import type { Context, MiddlewareHandler } from 'hono';
import { createIdempotencyMiddleware } from '../idempotency-middleware.js';
import { honoIdempotency, type IdempotencyVariables } from '../hono-middleware.js';
import { webOptions, type AdapterOptions } from './adapter-options.js';

export type HonoIdempotencyOptions<Tx> = AdapterOptions<Tx, Context>;

/**
 * Hono middleware with the Express middleware's behaviour, from options:
 *
 * ```ts
 * app.post('/orders', idempotency({ ledger, scopeOf: (c) => c.get('user')?.id }), async (c) =>
 *   c.json(createOrder(await c.req.json()), 201));
 * ```
 * `scopeOf` gets Hono's Context (`c.get('user')` from an auth middleware, `c.req.param()`); the
 * handler reads the body as usual and finds the ledger's `sql`/`tx` in `c.get('idempotency')`.
 */
export function idempotency<Tx>(
  options: HonoIdempotencyOptions<Tx>,
): MiddlewareHandler<{ Variables: IdempotencyVariables<Tx> }> {
  const origins = new WeakMap<Request, Context>();
  const guarded = honoIdempotency(createIdempotencyMiddleware<Tx>(webOptions(options, origins)));
  return async (c, next) => {
    origins.set(c.req.raw, c as unknown as Context);
    await guarded(c, next);
  };
}
