/** `oncely/express`: idempotency() middleware in front of unchanged Express routes. */
export {
  idempotency,
  type ExpressIdempotencyOptions,
  type ExpressRequestLike,
  type ExpressResponseLike,
} from '../adapters/express-idempotency.js';
export { idempotencyOf } from '../adapters/route-context.js';
export { captureRawBody } from '../adapters/parsed-body-bytes.js';
export type { AdapterOptions, RouteIdempotency } from '../adapters/adapter-options.js';
