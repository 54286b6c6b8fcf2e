/** `oncely/hono`: middleware for Hono routes, from options. */
export { idempotency, type HonoIdempotencyOptions } from '../adapters/hono-idempotency.js';
export type { RouteIdempotency } from '../adapters/adapter-options.js';
