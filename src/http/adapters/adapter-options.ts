import { InvalidOptionError } from '../../contract/errors.js';
import type { IdempotencyOptions } from '../idempotency-options.js';
import type { IdempotencyContext } from '../idempotency-middleware.js';

/**
 * The options of a framework adapter: those of the web-standard middleware, with `scopeOf` given
 * the framework's own request (Express/node `req`, Fastify `request`, Hono `c`), so the scope can
 * come from `req.user` (passport), a session or `res.locals`.
 */
export interface AdapterOptions<Tx, FrameworkRequest>
  extends Omit<IdempotencyOptions<Tx>, 'scopeOf' | 'validate' | 'onKeyless'> {
  /** The caller of a request; undefined is 401. @default every request is the single tenant 'default' */
  readonly scopeOf?:
    | ((request: FrameworkRequest) => string | undefined | Promise<string | undefined>)
    | undefined;
}

/** What a route behind an adapter finds (`res.locals.idempotency`, `request.idempotency`, `c.get('idempotency')`). */
export type RouteIdempotency<Tx = unknown> = IdempotencyContext<Tx>;

/**
 * The web-standard options for an adapter: its `scopeOf` finds the framework request a web
 * Request was made from. Each adapter keeps that link in a WeakMap for the request's life.
 */
export function webOptions<Tx, FrameworkRequest extends object>(
  options: AdapterOptions<Tx, FrameworkRequest>,
  origins: WeakMap<Request, FrameworkRequest>,
): IdempotencyOptions<Tx> {
  const { scopeOf, ...rest } = options;
  if (scopeOf === undefined) return rest;
  if (typeof scopeOf !== 'function')
    throw new InvalidOptionError(
      'scopeOf',
      scopeOf,
      "a function (the framework's request) => scope | undefined",
    );
  return {
    ...rest,
    scopeOf: (request) => {
      const origin = origins.get(request);
      return origin === undefined ? undefined : scopeOf(origin);
    },
  };
}
