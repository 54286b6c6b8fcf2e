import type { MiddlewareHandler } from 'hono';
import type { Journal, Ledger } from 'oncely';
import type { Validate } from 'oncely/http';
import { idempotency, type RouteIdempotency } from 'oncely/hono';

/** What a write route finds: the ledger's context, its `value` the checked body. */
export interface ApiEnv {
  Variables: {
    // biome-ignore lint/suspicious/noExplicitAny: each route's checked body has its own type
    idempotency: RouteIdempotency<unknown, any> | undefined;
  };
}

/** What the routes work with: the journal, and the write guard of each route. */
export interface ApiDeps {
  readonly journal: Journal<unknown>;
  /** The idempotency guard of a write route, its body checked by `validate` before the ledger. */
  write<V>(validate: Validate<V>): MiddlewareHandler<ApiEnv>;
}

/** The API's writes and the methods the ledger guards: each needs its own Idempotency-Key. */
const WRITE_METHODS = ['POST', 'PATCH', 'DELETE'] as const;

/**
 * Every write through oncely's own ledger (oncely/hono), scoped by the caller: a retry with the
 * same key replays the stored answer, the same key with another body is 422, one in flight 409.
 */
export function writeGuard(
  ledger: Ledger<unknown>,
  scopeOf: (request: Request) => string | undefined,
): ApiDeps['write'] {
  return <V>(validate: Validate<V>) =>
    idempotency<unknown, V>({
      ledger,
      scopeOf: (c) => scopeOf(c.req.raw),
      methods: [...WRITE_METHODS],
      validate,
    }) as unknown as MiddlewareHandler<ApiEnv>;
}

/** The checked body of a write route (set by its guard). */
export function checked<V>(c: {
  get(name: 'idempotency'): RouteIdempotency<unknown, V> | undefined;
}): V {
  const context = c.get('idempotency');
  // Unreachable: every write route goes through its guard.
  if (context === undefined) throw new Error('a write reached its handler without the ledger');
  return context.value;
}

export const noStore = { 'cache-control': 'no-store' } as const;
