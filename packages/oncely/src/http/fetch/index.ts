/**
 * `oncely/fetch`: a guard around a Fetch API handler, `(request, ...rest) => Response`: a
 * Next.js App Router route handler, Bun.serve, Deno.serve, a Worker.
 */
export {
  idempotentHandler,
  type FetchIdempotencyOptions,
  type FetchRequestHandler,
} from '../adapters/fetch-idempotency.js';
export { idempotencyOf } from '../adapters/route-context.js';
export type { RouteIdempotency } from '../adapters/adapter-options.js';
