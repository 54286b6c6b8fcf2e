/** `oncely/node`: the middleware around an unchanged node:http request listener. */
export {
  idempotentListener,
  type NodeIdempotencyOptions,
  type NodeListener,
} from '../adapters/node-idempotency.js';
export { idempotencyOf } from '../adapters/route-context.js';
export type { RouteIdempotency } from '../adapters/adapter-options.js';
