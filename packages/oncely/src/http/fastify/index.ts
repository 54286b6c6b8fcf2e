/** `oncely/fastify`: a plugin guarding the routes of a Fastify instance. */
export {
  fastifyIdempotency,
  type FastifyIdempotencyOptions,
} from '../adapters/fastify-idempotency.js';
export type { RouteIdempotency } from '../adapters/adapter-options.js';
export { idempotencyOf } from '../adapters/route-context.js';
