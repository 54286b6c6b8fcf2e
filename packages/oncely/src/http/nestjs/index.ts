/**
 * `oncely/nestjs`: the ledger for NestJS routes, on the Express and the Fastify platform.
 * `OncelyModule.forRoot(options)` in the root module, `@Idempotent()` on the guarded handlers (or
 * controllers), `@Idempotency('sql')` for the ledger's transaction in a handler.
 */
export {
  OncelyModule,
  type NestIdempotencyOptions,
  type NestRequest,
  type OncelyModuleAsyncOptions,
} from './oncely-module.js';
export { Idempotent, type IdempotentRouteOptions } from './idempotent.js';
export { Idempotency } from './idempotency.js';
export type { RouteIdempotency } from '../adapters/adapter-options.js';
