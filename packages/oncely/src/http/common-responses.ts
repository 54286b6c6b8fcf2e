import { knownRequestBody, requestOfBytes } from './known-body.js';
import { problemResponse } from './problem.js';

/** The WWW-Authenticate challenge of a bearer-token receiver (RFC 6750 section 3). */
export const BEARER_CHALLENGE = 'Bearer realm="oncely"';

/**
 * 401 problem+json with its WWW-Authenticate challenge: a 401 without one is not a valid 401
 * (RFC 9110 section 15.5.2). Every service and the middleware answer through this one function.
 */
export function unauthenticatedResponse(
  detail = 'send Authorization: Bearer <token>; oncely serve prints a dev token at start',
  challenge: string = BEARER_CHALLENGE,
): Response {
  return problemResponse('unauthenticated', detail, { headers: { 'www-authenticate': challenge } });
}

/** 405 problem+json naming the methods the route answers, in Allow too (RFC 9110 section 15.5.6). */
export function methodNotAllowedResponse(
  allowed: string,
  detail = `this route answers ${allowed}`,
): Response {
  return problemResponse('method_not_allowed', detail, { headers: { allow: allowed } });
}

/**
 * A request whose body is `bytes`: what a handler downstream of a reader gets, so nothing reads
 * the network twice. `request` itself when its body is still unread and known to be `bytes` (the
 * node adapters read it once, known-body.ts); otherwise a copy, whose signal carries over, so a
 * client that goes away still aborts the work.
 */
export function requestWithBody(request: Request, bytes: Uint8Array): Request {
  if (knownRequestBody(request) === bytes) return request;
  return requestOfBytes(
    request.url,
    { method: request.method, headers: request.headers, signal: request.signal },
    bytes,
  );
}
