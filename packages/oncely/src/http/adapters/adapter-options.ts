import { InvalidOptionError } from '../../contract/errors.js';
import type { IdempotencyOptions } from '../idempotency-options.js';
import type { IdempotencyContext } from '../idempotency-middleware.js';

/**
 * The options of a framework adapter: those of the web-standard middleware, with `scopeOf` given
 * the framework's own request (Express/node `req`, Fastify `request`, Hono `c`, a Fetch handler's
 * `Request`), so the scope can come from `req.user` (passport), a session or `res.locals`.
 * `validate` is the service's own check of the body, as in the middleware: its value reaches the
 * route as `context.value`. (`onKeyless` stays with the web-standard middleware: an adapter's
 * route is the one answer a request gets.)
 */
export interface AdapterOptions<Tx, FrameworkRequest, V = unknown>
  extends Omit<IdempotencyOptions<Tx, V>, 'scopeOf' | 'onKeyless'> {
  /** The caller of a request; undefined is 401. @default every request is the single tenant 'default' */
  readonly scopeOf?:
    | ((request: FrameworkRequest) => string | undefined | Promise<string | undefined>)
    | undefined;
}

/**
 * What a route behind an adapter finds (`res.locals.idempotency`, `request.idempotency`,
 * `c.get('idempotency')`, `idempotencyOf(request)`); `value` is what `validate` made of the body.
 */
export type RouteIdempotency<Tx = unknown, V = unknown> = IdempotencyContext<Tx, V>;

/**
 * The web-standard options for an adapter: its `scopeOf` finds the framework request a web
 * Request was made from. Each adapter keeps that link in a WeakMap for the request's life.
 */
export function webOptions<Tx, FrameworkRequest extends object, V = unknown>(
  options: AdapterOptions<Tx, FrameworkRequest, V>,
  origins: WeakMap<Request, FrameworkRequest>,
): IdempotencyOptions<Tx, V> {
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
