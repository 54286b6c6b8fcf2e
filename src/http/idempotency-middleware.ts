import { HEADER } from '../contract/headers.js';
import type { SqlHandle } from '../ledger/sql-handle.js';
import { sqlHandleOf } from './sql-handle-of.js';
import { keyProblem } from '../contract/idempotency-key.js';
import type { Claim, ExecuteResult } from '../ledger/ledger-result.js';
import { requestWithBody } from './common-responses.js';
import {
  resolveIdempotencyOptions,
  type IdempotencyOptions,
  type ResolvedIdempotencyOptions,
} from './idempotency-options.js';
import { keyFromHeader } from './key-header.js';
import { problemResponse, type ProblemKind } from './problem.js';
import { readBodyWithin } from './read-body.js';
import type { AdmittedRequest } from './request-validation.js';
import { firstResponse, receiptToResponse, responseToReceipt } from './receipt-response.js';

export type { AdmittedRequest } from './request-validation.js';

/**
 * What a guarded handler is given besides the request: the admitted request, its key, and the
 * ledger's transaction handle, to use for every write of its effect, so the effect and the receipt
 * commit together. Passed as an explicit argument (not AsyncLocalStorage) so the type checker sees
 * that a handler writing outside `tx` is writing outside the transaction.
 */
export interface IdempotencyContext<Tx, V = unknown> extends AdmittedRequest<V> {
  readonly tx: Tx;
  /**
   * The same transaction as a dialect-neutral SQL handle (`$1` placeholders, `run/get/all`): a
   * handler written against it runs on SQLite and on PostgreSQL alike. On a store that is not
   * SQL (memory) every call rejects, saying so.
   */
  readonly sql: SqlHandle;
  readonly key: string;
  readonly claim: Claim;
}

/**
 * The downstream handler. `request` carries the same bytes as the original (rebuilt once, from
 * the bytes already read). `context` is undefined for requests the middleware passes through
 * (methods not in `methods`, such as GET): those run outside any ledger transaction.
 */
export type IdempotentHandler<Tx, V = unknown> = (
  request: Request,
  context: IdempotencyContext<Tx, V> | undefined,
) => Response | Promise<Response>;

/** The web-standard middleware: `(Request, next) -> Response`. */
export type IdempotencyMiddleware<Tx, V = unknown> = ((
  request: Request,
  next: IdempotentHandler<Tx, V>,
) => Promise<Response>) & {
  readonly options: ResolvedIdempotencyOptions<Tx, V>;
};

/**
 * Speaks the receiver's wire contract (docs/design.md) in front of a handler, in one fixed order:
 *
 * 1. scope: `scopeOf` is called once; none is 401 with a WWW-Authenticate challenge;
 * 2. key: a missing key is 400 (or, with `onKeyless`, the request is answered outside the
 *    ledger by that handler after steps 3 and 4; with `missingKey: 'pass-through'`, the handler
 *    runs outside the ledger, context undefined), a malformed one 400;
 * 3. body: read once, within `maxBodyBytes` (413 past it, without buffering the rest);
 * 4. validate: the service's own check of the bytes (415, 400, 422...); a refusal changes nothing;
 * 5. ledger: 422 when the key was used with another payload (checked before the in-flight check);
 *    409 + Retry-After while the first request holds its lease; the stored status, allow-listed
 *    headers and body plus `Idempotent-Replayed: true` for an exact retry; 503 + Retry-After when
 *    the ledger is down, and then the handler never runs;
 * 6. handler: called with a copy of the request and the context (scope, key, bytes, the checked
 *    value, the transaction). A handler that throws gets 500, its transaction rolls back and the
 *    key is released; an answer the ledger's `shouldStore` refuses (5xx by default) is passed on
 *    but not stored.
 */
export function createIdempotencyMiddleware<Tx, V = unknown>(
  options: IdempotencyOptions<Tx, V>,
): IdempotencyMiddleware<Tx, V> {
  const o = resolveIdempotencyOptions(options);
  const sqlOf = sqlHandleOf(o.ledger.store);
  const problem = (kind: ProblemKind, detail: string, retryAfterMs?: number): Response =>
    problemResponse(kind, detail, { retryAfterMs, typeBase: o.problemTypeBase });

  /** Steps 3 and 4: the body, read once, and the service's check of it. */
  async function admit(request: Request, scope: string): Promise<AdmittedRequest<V> | Response> {
    const read = await readBodyWithin(request, o.maxBodyBytes);
    if (read.kind === 'too_large') {
      const detail = `the body exceeds ${read.limitBytes} bytes`;
      return problemResponse('payload_too_large', detail, {
        typeBase: o.problemTypeBase,
        extensions: { maxBodyBytes: read.limitBytes },
      });
    }
    const checked = await o.validate({ request, scope, body: read.bytes });
    if (!checked.ok) return checked.response;
    return { scope, body: read.bytes, value: checked.value };
  }

  async function guard(request: Request, next: IdempotentHandler<Tx, V>): Promise<Response> {
    const scope = await o.scopeOf(request);
    if (scope === undefined || scope === '') return o.unauthenticated(request);
    const header = request.headers.get(HEADER.idempotencyKey);
    // Gradual roll-out: a keyless request is served as if oncely were not there (documented, off by default).
    if (header === null && o.missingKey === 'pass-through') return next(request, undefined);
    if (header === null && o.onKeyless !== undefined) {
      const admitted = await admit(request, scope);
      return admitted instanceof Response
        ? admitted
        : o.onKeyless(requestWithBody(request, admitted.body), admitted);
    }
    if (header === null)
      return problem(
        'missing_key',
        `${request.method} requests must carry an ${HEADER.idempotencyKey} header`,
      );
    const key = keyFromHeader(header);
    const malformed = keyProblem(key);
    if (malformed !== undefined) return problem('invalid_key', malformed);

    const admitted = await admit(request, scope);
    if (admitted instanceof Response) return admitted;
    const url = new URL(request.url);
    const fingerprint = await o.fingerprintOf({
      method: request.method,
      url,
      headers: request.headers,
      body: admitted.body,
      value: admitted.value,
    });

    let handlerHeaders: Headers | undefined;
    const result = await o.ledger.execute({ scope, key, fingerprint }, async (tx, claim) => {
      const response = await next(requestWithBody(request, admitted.body), {
        ...admitted,
        tx,
        sql: sqlOf(tx),
        key,
        claim,
      });
      // Nobody will receive this answer (the client left, or the server answered for the handler:
      // a timeout, the end of a shutdown's grace): roll back rather than commit it unseen.
      request.signal.throwIfAborted();
      const { receipt, headers } = await responseToReceipt(response, o.receiptHeaderSet);
      handlerHeaders = headers;
      return receipt;
    });
    return answer(result, handlerHeaders, request);
  }

  function answer(
    result: ExecuteResult,
    handlerHeaders: Headers | undefined,
    request: Request,
  ): Response {
    switch (result.kind) {
      case 'executed':
      case 'not_stored':
        return firstResponse(
          result.receipt.status,
          handlerHeaders ?? new Headers(),
          result.receipt.body,
        );
      case 'replayed':
        return receiptToResponse(result.receipt, { [HEADER.idempotentReplayed]: 'true' });
      case 'conflict':
        return problem(
          'key_reused',
          `this ${HEADER.idempotencyKey} was first used for a different request; use a new key for a new request`,
        );
      case 'in_flight':
        return problem(
          'in_flight',
          'the first request with this key is still being processed; retry after the delay',
          result.retryAfterMs,
        );
      case 'lease_lost':
        return problem(
          'in_flight',
          'another worker took this request over; retry after the delay',
          result.retryAfterMs,
        );
      case 'unavailable':
        o.onError(result.cause, request);
        return problem(
          'ledger_unavailable',
          'the idempotency ledger cannot be reached; the request was not processed',
          o.unavailableRetryAfterMs,
        );
    }
  }

  const middleware = async (
    request: Request,
    next: IdempotentHandler<Tx, V>,
  ): Promise<Response> => {
    if (!o.methodSet.has(request.method.toUpperCase())) return next(request, undefined);
    try {
      return await guard(request, next);
    } catch (error) {
      // The handler (or scopeOf, validate, fingerprintOf) threw. The ledger has rolled the effect
      // back and released the key, so the client may retry with the same key.
      if (!request.signal.aborted) o.onError(error, request);
      return problem(
        'internal_error',
        'the request failed and was rolled back; it may be retried with the same key',
      );
    }
  };
  return Object.assign(middleware, { options: o });
}

/** A whole handler: the middleware in front of `handler`. */
export function withIdempotency<Tx, V>(
  middleware: IdempotencyMiddleware<Tx, V>,
  handler: IdempotentHandler<Tx, V>,
): (request: Request) => Promise<Response> {
  return (request) => middleware(request, handler);
}
