import { HEADER } from '../contract/headers.js';
import type { SqlHandle } from '../ledger/sql-handle.js';
import { sqlHandleOf } from './sql-handle-of.js';
import { keyProblem } from '../contract/idempotency-key.js';
import type { Claim, ExecuteResult } from '../ledger/ledger-result.js';
import { resolveIdempotencyOptions, type IdempotencyOptions, type ResolvedIdempotencyOptions } from './idempotency-options.js';
import { keyFromHeader } from './key-header.js';
import { problemResponse, type ProblemKind } from './problem.js';
import { readBodyWithin } from './read-body.js';
import { firstResponse, receiptToResponse, responseToReceipt } from './receipt-response.js';

/**
 * What a guarded handler is given besides the request: the ledger's transaction handle, to use
 * for every write of its effect, so the effect and the receipt commit together. Passed as an
 * explicit argument (not AsyncLocalStorage) so the type checker sees that a handler writing
 * outside `tx` is writing outside the transaction.
 */
export interface IdempotencyContext<Tx> {
  readonly tx: Tx;
  /**
   * The same transaction as a dialect-neutral SQL handle (`$1` placeholders, `run/get/all`): a
   * handler written against it runs on SQLite and on PostgreSQL alike. On a store that is not
   * SQL (memory) every call rejects, saying so.
   */
  readonly sql: SqlHandle;
  readonly scope: string;
  readonly key: string;
  readonly claim: Claim;
}

/**
 * The downstream handler. `context` is undefined for requests the middleware passes through
 * (methods not in `methods`, such as GET): those run outside any ledger transaction.
 */
export type IdempotentHandler<Tx> = (request: Request, context: IdempotencyContext<Tx> | undefined) => Response | Promise<Response>;

/** The web-standard middleware: `(Request, next) -> Response`. */
export type IdempotencyMiddleware<Tx> = ((request: Request, next: IdempotentHandler<Tx>) => Promise<Response>) & {
  readonly options: ResolvedIdempotencyOptions<Tx>;
};

/**
 * Speaks the receiver's wire contract (DESIGN.md) in front of a handler:
 * 401 without a scope; 400 for a missing or malformed key; 413 for a body over maxBodyBytes;
 * 422 when the key was used with another payload (checked before the in-flight check); 409 +
 * Retry-After while the first request holds its lease; the stored status, allow-listed headers
 * and body plus `Idempotent-Replayed: true` for an exact retry; 503 + Retry-After when the ledger
 * is down, and then the handler never runs. A handler that throws gets 500, its transaction
 * rolls back and the key is released; a 5xx it returns is passed on but not stored.
 */
export function createIdempotencyMiddleware<Tx>(options: IdempotencyOptions<Tx>): IdempotencyMiddleware<Tx> {
  const o = resolveIdempotencyOptions(options);
  const sqlOf = sqlHandleOf(o.ledger.store);
  const problem = (kind: ProblemKind, detail: string, retryAfterMs?: number): Response =>
    problemResponse(kind, detail, { retryAfterMs, typeBase: o.problemTypeBase });

  async function guard(request: Request, next: IdempotentHandler<Tx>): Promise<Response> {
    const scope = await o.scopeOf(request);
    if (scope === undefined || scope === '') return problem('unauthenticated', 'this request needs an authenticated caller: keys are scoped by caller');
    const header = request.headers.get(HEADER.idempotencyKey);
    if (header === null) return problem('missing_key', `${request.method} requests must carry an ${HEADER.idempotencyKey} header`);
    const key = keyFromHeader(header);
    const malformed = keyProblem(key);
    if (malformed !== undefined) return problem('invalid_key', malformed);

    const read = await readBodyWithin(request, o.maxBodyBytes);
    if (read.kind === 'too_large') return problem('payload_too_large', `the body exceeds ${read.limitBytes} bytes`);
    const url = new URL(request.url);
    const fingerprint = await o.fingerprintOf({ method: request.method, url, headers: request.headers, body: read.bytes });

    let handlerHeaders: Headers | undefined;
    const result = await o.ledger.execute({ scope, key, fingerprint }, async (tx, claim) => {
      // The body was read for the fingerprint; the handler gets an identical request to read again.
      const forwarded = new Request(request.url, {
        method: request.method,
        headers: request.headers,
        body: read.bytes.byteLength === 0 ? null : new Uint8Array(read.bytes),
        signal: request.signal,
      });
      const response = await next(forwarded, { tx, sql: sqlOf(tx), scope, key, claim });
      const { receipt, headers } = await responseToReceipt(response, o.receiptHeaderSet);
      handlerHeaders = headers;
      return receipt;
    });
    return answer(result, handlerHeaders, request);
  }

  function answer(result: ExecuteResult, handlerHeaders: Headers | undefined, request: Request): Response {
    switch (result.kind) {
      case 'executed':
      case 'not_stored':
        return firstResponse(result.receipt.status, handlerHeaders ?? new Headers(), result.receipt.body);
      case 'replayed':
        return receiptToResponse(result.receipt, { [HEADER.idempotentReplayed]: 'true' });
      case 'conflict':
        return problem('key_reused', `this ${HEADER.idempotencyKey} was first used for a different request; use a new key for a new request`);
      case 'in_flight':
        return problem('in_flight', 'the first request with this key is still being processed; retry after the delay', result.retryAfterMs);
      case 'lease_lost':
        return problem('in_flight', 'another worker took this request over; retry after the delay', result.retryAfterMs);
      case 'unavailable':
        o.onError(result.cause, request);
        return problem('ledger_unavailable', 'the idempotency ledger cannot be reached; the request was not processed', o.unavailableRetryAfterMs);
    }
  }

  const middleware = async (request: Request, next: IdempotentHandler<Tx>): Promise<Response> => {
    if (!o.methodSet.has(request.method.toUpperCase())) return next(request, undefined);
    try {
      return await guard(request, next);
    } catch (error) {
      // The handler (or scopeOf, or fingerprintOf) threw. The ledger has rolled the effect back
      // and released the key, so the client may retry with the same key.
      o.onError(error, request);
      return problem('internal_error', 'the request failed and was rolled back; it may be retried with the same key');
    }
  };
  return Object.assign(middleware, { options: o });
}

/** A whole handler: the middleware in front of `handler`. */
export function withIdempotency<Tx>(middleware: IdempotencyMiddleware<Tx>, handler: IdempotentHandler<Tx>): (request: Request) => Promise<Response> {
  return (request) => middleware(request, handler);
}
