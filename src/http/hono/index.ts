/** `oncely/hono`: middleware for Hono routes, from options. */
export { idempotency, type HonoIdempotencyOptions } from '../adapters/hono-idempotency.js';
export type { AdapterOptions, RouteIdempotency } from '../adapters/adapter-options.js';
