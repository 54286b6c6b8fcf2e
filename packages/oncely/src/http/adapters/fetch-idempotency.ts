import type { IdempotencyContext } from '../idempotency-middleware.js';
import type { AdapterOptions } from './adapter-options.js';
import { createFetchGuard } from './fetch-guard.js';
import { setRouteContext } from './route-context.js';

export type FetchIdempotencyOptions<Tx, V = unknown> = AdapterOptions<Tx, Request, V>;

/**
 * A Fetch API handler: a Request, and whatever else the platform passes (Next.js's
 * `{ params }`, Deno's `info`, a Worker's `env` and `ctx`, Bun's `server`).
 */
export type FetchRequestHandler<Rest extends unknown[]> = (
  request: Request,
  ...rest: Rest
) => Response | Promise<Response>;

/**
 * A Fetch API handler guarded by the ledger, for a Next.js App Router route, Bun.serve,
 * Deno.serve or a Worker:
 *
 * ```ts
 * export const POST = idempotentHandler({ ledger, scopeOf: callerOf }, async (request) => {
 *   const order = await request.json();
 *   await idempotencyOf(request)?.sql.run('INSERT INTO orders ...', [...]);
 *   return Response.json(order, { status: 201 });
 * });
 * ```
 * The handler gets the very request the platform passed (a NextRequest keeps `nextUrl` and
 * `cookies`), its body unread: the guard reads a clone of it. `idempotencyOf(request)` gives the
 * handler the ledger's `sql`, `tx`, key and the `value` of `validate`. Its response becomes the
 * receipt; a retry gets it back with `Idempotent-Replayed: true` and the handler does not run
 * again. Other arguments are handed on unchanged; `scopeOf` gets the request.
 */
export function idempotentHandler<Tx, V = unknown, Rest extends unknown[] = []>(
  options: FetchIdempotencyOptions<Tx, V>,
  handler: FetchRequestHandler<Rest>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  const guard = createFetchGuard<Tx, V, Request>(options);
  const { methodSet } = guard.options;
  return async (request, ...rest) => {
    if (!methodSet.has(request.method.toUpperCase())) return handler(request, ...rest);
    // A body already read cannot be cloned; the guard answers it (500, reported to onError).
    const copy = request.bodyUsed ? request : request.clone();
    let ran = false;
    const response = await guard(copy, request, (_copy, context) => {
      ran = true;
      if (context !== undefined) setRouteContext(request, context as IdempotencyContext<unknown>);
      return handler(request, ...rest);
    });
    // Answered for the handler (a replay, a refusal): its twin of the body is not wanted. The
    // source stream stops only when both twins are cancelled (a 413 leaves it mid-body).
    if (!ran && !request.bodyUsed) request.body?.cancel().catch(() => {});
    return response;
  };
}
