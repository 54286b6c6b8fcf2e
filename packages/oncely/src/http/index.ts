/**
 * The receiver's HTTP side: a web-standard `(Request, next) -> Response` middleware speaking the
 * wire contract of docs/design.md, the problem+json answers it gives, and the bridge to
 * node:http. Express, Fastify, Hono, node:http routes and Fetch handlers have middlewares of
 * their own (`oncely/express`, `oncely/fastify`, `oncely/hono`, `oncely/node`, `oncely/fetch`).
 *
 * ```ts
 * const store = createSqliteStore({ database: () => openSqliteDatabase('oncely-data/app.db') });
 * const idempotency = createIdempotencyMiddleware({
 *   ledger: createLedger({ store }),
 *   scopeOf: (request) => callerOf(request.headers.get('authorization')), // undefined -> 401
 * });
 * const app = withIdempotency(idempotency, async (request, context) => {
 *   if (!context) return handleRead(request);            // GET etc.: no key, no transaction
 *   await context.tx.begin();                            // takes the SQLite writer now, not before
 *   context.tx.run('INSERT INTO notes ...', ...);         // commits with the receipt, or not at all
 *   return Response.json(note, { status: 201 });
 * });
 * http.createServer(toNodeListener(app)).listen(8080);
 * ```
 * Outside a guarded request (a GET handler), read a SQLite store through `store.read(...)` (the
 * read connection: committed rows, never waiting for a write) and write through `store.write(...)`.
 */
export {
  createIdempotencyMiddleware,
  withIdempotency,
  type IdempotencyContext,
  type IdempotencyMiddleware,
  type IdempotentHandler,
} from './idempotency-middleware.js';
export type { IdempotencyOptions, WriteMode } from './idempotency-options.js';
export {
  PROBLEMS,
  defineProblem,
  problemDetails,
  problemResponse,
  retryAfterSeconds,
  type ProblemDetails,
  type ProblemKind,
  type ProblemType,
} from './problem.js';
export {
  BEARER_CHALLENGE,
  unauthenticatedResponse,
  methodNotAllowedResponse,
} from './common-responses.js';
export type { Validate } from './request-validation.js';
export { jsonValidator, jsonBodyFingerprint, isJsonMediaType } from './json-body.js';
export type { FingerprintInput } from './request-fingerprint.js';
export { quotedName, quotedNames } from './error-list.js';
export {
  toNodeListener,
  answeredInsteadStatus,
  abortNodeRequest,
  type ConnectionControl,
  type FetchHandler,
  type NodeListenerOptions,
} from './node-listener.js';
