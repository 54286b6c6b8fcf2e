import { problemResponse } from '../http/problem.js';
import { bearerToken, type Callers } from './callers.js';

/** The caller of a request, from its `Authorization: Bearer …` header; undefined when absent or unknown. */
export type ScopeOf = (request: Request) => string | undefined;

/** The scope function every service gets: keys, rows and hits are all scoped by the caller's name. */
export function scopeOfRequest(callers: Callers): ScopeOf {
  return (request) => {
    const token = bearerToken(request.headers.get('authorization'));
    return token === undefined ? undefined : callers.callerOf(token);
  };
}

/** The WWW-Authenticate challenge every 401 carries (RFC 6750 section 3). */
export const BEARER_CHALLENGE = 'Bearer realm="oncely"';

/** 401 problem+json with the challenge. */
export function unauthenticatedResponse(): Response {
  const response = problemResponse('unauthenticated', 'send Authorization: Bearer <token>; oncely serve prints a dev token at start');
  response.headers.set('www-authenticate', BEARER_CHALLENGE);
  return response;
}
