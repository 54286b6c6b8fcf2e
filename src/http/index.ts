/**
 * The receiver's HTTP side: a web-standard `(Request, next) -> Response` middleware speaking the
 * wire contract of docs/design.md, and thin adapters for node:http, Express and Hono.
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
export {
  resolveIdempotencyOptions,
  DEFAULT_IDEMPOTENCY_OPTIONS,
  type IdempotencyOptions,
  type IdempotencyTuning,
  MISSING_KEY_MODES,
  SINGLE_TENANT_SCOPE,
  type MissingKeyMode,
  type WriteMode,
  type ResolvedIdempotencyOptions,
} from './idempotency-options.js';
export type { GuardSql } from './guard-sql.js';
export {
  PROBLEMS,
  DEFAULT_PROBLEM_TYPE_BASE,
  defineProblem,
  problemDetails,
  problemResponse,
  retryAfterSeconds,
  type ProblemDetails,
  type ProblemKind,
  type ProblemOptions,
  type ProblemType,
} from './problem.js';
export { logOncelyError } from './log-oncely-error.js';
export {
  BEARER_CHALLENGE,
  unauthenticatedResponse,
  methodNotAllowedResponse,
  requestWithBody,
} from './common-responses.js';
export type {
  AdmittedRequest,
  Validate,
  Validation,
  ValidationInput,
} from './request-validation.js';
export {
  jsonValidator,
  jsonBodyFingerprint,
  isJsonMediaType,
  ACCEPTED_JSON_TYPES,
  type JsonCheck,
  type JsonValidatorOptions,
} from './json-body.js';
export { requestFingerprint, type FingerprintInput } from './request-fingerprint.js';
export { readBodyWithin, type BodyRead } from './read-body.js';
export { keyFromHeader } from './key-header.js';
export { quotedName, quotedNames } from './error-list.js';
export { responseToReceipt, receiptToResponse } from './receipt-response.js';
export {
  toNodeListener,
  answeredInsteadStatus,
  abortNodeRequest,
  type ConnectionControl,
  type FetchHandler,
  type NodeListenerOptions,
} from './node-listener.js';
