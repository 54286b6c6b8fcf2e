import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IdempotencyContext } from '../idempotency-middleware.js';
import type { AdapterOptions } from './adapter-options.js';
import { createNodeGuard } from './node-guard.js';
import { parsedBodyBytes, rawBodyOf } from './parsed-body-bytes.js';
import { setRouteContext } from './route-context.js';

/** The part of an Express request the middleware reads (Express's own types are not imported). */
export interface ExpressRequestLike extends IncomingMessage {
  readonly originalUrl?: string;
  body?: unknown;
  rawBody?: unknown;
}

/** The part of an Express response it writes: `res.locals.idempotency` is set for the route. */
export interface ExpressResponseLike extends ServerResponse {
  locals?: Record<string, unknown>;
}

export type ExpressIdempotencyOptions<Tx> = AdapterOptions<Tx, ExpressRequestLike>;

/**
 * Express middleware in front of unchanged `(req, res, next)` routes:
 *
 * ```ts
 * app.use(express.json({ verify: captureRawBody }));     // or plain express.json()
 * app.use(passport.session());
 * app.post('/orders', idempotency({ ledger, scopeOf: (req) => req.user?.id }), (req, res) => {
 *   res.status(201).json(createOrder(req.body));         // the route as it was
 * });
 * ```
 * - Mount it after the body parser. The fingerprint comes from the raw bytes the parser's verify
 *   hook kept (`captureRawBody`), else from the parsed body canonicalised (RFC 8785). Without a
 *   parser it reads the body itself and hands it on as a Buffer in `req.body`, as `express.raw()`.
 * - `scopeOf` gets `req` (`req.user`, `req.params`, `req.ip`); without one, the app is one tenant.
 * - The route's response (status, headers, body) is captured as the receipt; a retry gets it back
 *   with `Idempotent-Replayed: true` and the route does not run again. The route runs inside the
 *   ledger's transaction: `res.locals.idempotency` (or `idempotencyOf(req)`) has its `sql`, `tx`,
 *   `key` and `claim.tookOver`.
 * - Errors the route passes to `next(err)` are answered by Express's error handler; a 5xx is passed
 *   on, not stored, and its writes roll back.
 */
export function idempotency<Tx>(
  options: ExpressIdempotencyOptions<Tx>,
): (req: ExpressRequestLike, res: ExpressResponseLike, next: (error?: unknown) => void) => void {
  const guard = createNodeGuard<Tx, ExpressRequestLike>(options);
  return (req, res, next) => {
    const consumed = req.readableEnded || req.body !== undefined;
    const bytes = parsedBodyBytes(rawBodyOf(req), req.body, consumed);
    const route = (context: IdempotencyContext<Tx> | undefined): void => {
      if (context !== undefined) {
        setRouteContext(req, context as IdempotencyContext<unknown>);
        (res.locals ??= {})['idempotency'] = context;
        if (!consumed) req.body = Buffer.from(context.body); // read here, as express.raw() would
      }
      next();
    };
    guard(req, res, req.originalUrl ?? req.url ?? '/', bytes, route).catch(next);
  };
}
