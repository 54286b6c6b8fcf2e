/** `oncely/express`: idempotency() middleware in front of unchanged Express routes. */
export { idempotency, type ExpressIdempotencyOptions } from '../adapters/express-idempotency.js';
export { idempotencyOf } from '../adapters/route-context.js';
export { captureRawBody } from '../adapters/parsed-body-bytes.js';
export type { RouteIdempotency } from '../adapters/adapter-options.js';
