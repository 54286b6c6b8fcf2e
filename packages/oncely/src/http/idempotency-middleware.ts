import { HEADER } from '../contract/headers.js';
import { requestWithBody } from './common-responses.js';
import {
  createIdempotencyGuard,
  type GuardAnswer,
  type IdempotencyContext,
} from './idempotency-guard.js';
import {
  resolveIdempotencyOptions,
  type IdempotencyOptions,
  type ResolvedIdempotencyOptions,
} from './idempotency-options.js';
import { incomingOfRequest, type Incoming } from './incoming.js';
import { firstResponse, receiptToResponse } from './receipt-response.js';

export type { AdmittedRequest } from './request-validation.js';
export type { IdempotencyContext } from './idempotency-guard.js';

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
 * The web-standard middleware: the idempotency guard (idempotency-guard.ts, where the order of
 * its steps is written down) in front of a `(Request, context) -> Response` handler, for the
 * methods in `options.methods`; others go to the handler untouched, context undefined.
 */
export function createIdempotencyMiddleware<Tx, V = unknown>(
  options: IdempotencyOptions<Tx, V>,
): IdempotencyMiddleware<Tx, V> {
  const o = resolveIdempotencyOptions(options);
  const guard = createIdempotencyGuard<Tx, V, Incoming>(o, (incoming) =>
    o.scopeOf(incoming.request()),
  );
  const middleware = async (
    request: Request,
    next: IdempotentHandler<Tx, V>,
  ): Promise<Response> => {
    if (!o.methodSet.has(request.method.toUpperCase())) return next(request, undefined);
    const answer = await guard(incomingOfRequest(request), (incoming, context) =>
      context === undefined
        ? next(incoming.request(), undefined)
        : next(requestWithBody(incoming.request(), context.body), context),
    );
    return answerToResponse(answer);
  };
  return Object.assign(middleware, { options: o });
}

/** The guard's answer as a Response. */
export function answerToResponse(answer: GuardAnswer): Response {
  if (answer instanceof Response) return answer;
  const { status, body } = answer.receipt;
  return answer.kind === 'replayed'
    ? receiptToResponse(answer.receipt, { [HEADER.idempotentReplayed]: 'true' })
    : firstResponse(status, answer.headers, body);
}

/** A whole handler: the middleware in front of `handler`. */
export function withIdempotency<Tx, V>(
  middleware: IdempotencyMiddleware<Tx, V>,
  handler: IdempotentHandler<Tx, V>,
): (request: Request) => Promise<Response> {
  return (request) => middleware(request, handler);
}
