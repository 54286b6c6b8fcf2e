/**
 * The receiver's HTTP side: a web-standard `(Request, next) -> Response` middleware speaking the
 * DESIGN.md wire contract, and thin adapters for node:http, Express and Hono.
 */
export {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotencyContext,
  type IdempotencyMiddleware,
  type IdempotentHandler,
} from './idempotency-middleware.js';
export {
  resolveIdempotencyOptions,
  DEFAULT_IDEMPOTENCY_OPTIONS,
  type IdempotencyOptions,
  type IdempotencyTuning,
  type ResolvedIdempotencyOptions,
} from './idempotency-options.js';
export {
  PROBLEMS,
  PROBLEM_KINDS,
  DEFAULT_PROBLEM_TYPE_BASE,
  problemDetails,
  problemResponse,
  retryAfterSeconds,
  type ProblemDetails,
  type ProblemKind,
  type ProblemOptions,
} from './problem.js';
export { requestFingerprint, type FingerprintInput } from './request-fingerprint.js';
export { readBodyWithin, type BodyRead } from './read-body.js';
export { keyFromHeader } from './key-header.js';
export { responseToReceipt, receiptToResponse } from './receipt-response.js';
export { toNodeListener, type FetchHandler, type NodeListenerOptions } from './node-listener.js';
export { toExpressHandler } from './express-handler.js';
export { honoIdempotency, type IdempotencyVariables } from './hono-middleware.js';
