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

/** The 401 and its challenge live with the other shared answers, in the http layer. */
export { BEARER_CHALLENGE, unauthenticatedResponse } from 'oncely/http';
