import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { defineProblem, problemResponse } from 'oncely/http';

const crossSite = defineProblem('cross_site', 403, 'Cross-site request refused');
const notJson = defineProblem('unsupported_media_type', 415, 'Unsupported content type');

/**
 * Guards the outbox view's API, which reads payloads and whose replay writes:
 * - every /api request carries `Authorization: Bearer TOKEN`, the token printed at start (the
 *   page takes it from the URL's #token= fragment, which never reaches a server or a log);
 * - a write (POST) must also come from the page's own origin: an `Origin` other than the
 *   request's own host, or `Sec-Fetch-Site` other than same-origin, is refused; and its body
 *   must be `application/json`, which a cross-site form cannot send without asking first.
 */
export function outboxGuard(token: string): MiddlewareHandler {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (c, next) => {
    const given = Buffer.from(c.req.header('authorization') ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return problemResponse(
        'unauthenticated',
        'send Authorization: Bearer TOKEN, the token `oncely outbox ui` printed when it started',
        { headers: { 'www-authenticate': 'Bearer' } },
      );
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const origin = c.req.header('origin');
      const site = c.req.header('sec-fetch-site');
      const host = c.req.header('host');
      if (
        (origin !== undefined && origin !== `http://${host}`) ||
        (site !== undefined && site !== 'same-origin')
      )
        return problemResponse(
          crossSite,
          'a write is taken only from the outbox page itself (same origin)',
        );
      if (!/^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? ''))
        return problemResponse(notJson, 'send the replay request as application/json');
    }
    return next();
  };
}
