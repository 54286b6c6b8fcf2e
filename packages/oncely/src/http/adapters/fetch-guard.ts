import { createIdempotencyMiddleware, type IdempotencyContext } from '../idempotency-middleware.js';
import type { ResolvedIdempotencyOptions } from '../idempotency-options.js';
import { webOptions, type AdapterOptions } from './adapter-options.js';

/**
 * The route behind the guard: `request` carries the body the guard read (the same bytes);
 * `context` is undefined for a request passed through (a GET, a keyless pass-through).
 */
export type FetchRoute<Tx, V> = (
  request: Request,
  context: IdempotencyContext<Tx, V> | undefined,
) => Response | Promise<Response>;

/**
 * Guards one web Request that a framework made from its own request, `origin` (Hono's `c`, or
 * the Request itself for a Fetch handler), which `scopeOf` is given.
 */
export type FetchGuard<Tx, V, Origin> = ((
  request: Request,
  origin: Origin,
  route: FetchRoute<Tx, V>,
) => Promise<Response>) & {
  readonly options: ResolvedIdempotencyOptions<Tx, V>;
};

/**
 * The shared core of the adapters whose framework speaks Fetch (Hono, and Fetch handlers:
 * Next.js route handlers, Bun.serve, Deno.serve, Workers): the web-standard middleware, with
 * `scopeOf` handed the framework's own request for the request's life.
 */
export function createFetchGuard<Tx, V, Origin extends object>(
  options: AdapterOptions<Tx, Origin, V>,
): FetchGuard<Tx, V, Origin> {
  const origins = new WeakMap<Request, Origin>();
  const middleware = createIdempotencyMiddleware<Tx, V>(webOptions(options, origins));
  const guard = (request: Request, origin: Origin, route: FetchRoute<Tx, V>): Promise<Response> => {
    origins.set(request, origin);
    return middleware(request, route);
  };
  return Object.assign(guard, { options: middleware.options });
}
