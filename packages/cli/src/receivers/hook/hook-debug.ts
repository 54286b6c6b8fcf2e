import { formatHttpDate, HEADER, type Clock } from 'oncely';
import { methodNotAllowedResponse, unauthenticatedResponse } from 'oncely/http';
import { readRowLimit, rowPage } from '../sql/row-limit.js';
import type { ServiceDatabase } from '../sql/service-database.js';
import { countHits, listHitsPage } from './hook-hits-table.js';
import type { HookScript } from './hook-script.js';

/** Where the debug routes live and what they read. */
export interface HookDebugDeps<Tx> {
  readonly hitsPath: string;
  readonly resetPath: string;
  readonly db: ServiceDatabase<Tx>;
  readonly script: HookScript;
  readonly clock: Clock;
  readonly scopeOf: (request: Request) => string | undefined;
  readonly reset: (scope: string) => Promise<void>;
}

/** The debug routes: the caller's hits (GET), and clearing them (DELETE, or the older POST reset). */
export function createHookDebug<Tx>(
  deps: HookDebugDeps<Tx>,
): (request: Request, path: string) => Promise<Response> {
  const { hitsPath, resetPath, db, script, clock } = deps;
  return async (request, path) => {
    const allowed = path === hitsPath ? 'GET, HEAD, DELETE' : 'POST';
    const method = request.method.toUpperCase();
    const isReset =
      (path === hitsPath && method === 'DELETE') || (path === resetPath && method === 'POST');
    const isList = path === hitsPath && (method === 'GET' || method === 'HEAD');
    if (!isReset && !isList) return methodNotAllowedResponse(allowed, `${path} answers ${allowed}`);
    const scope = deps.scopeOf(request);
    if (scope === undefined || scope === '') return unauthenticatedResponse();
    if (isReset) {
      await deps.reset(scope);
      return new Response(null, {
        status: 204,
        headers: { [HEADER.date]: formatHttpDate(clock.now()) },
      });
    }
    const asked = readRowLimit(new URL(request.url));
    if (asked.kind === 'refused') return asked.response;
    const { hits, total, counts } = await db.transaction(async (sql) => ({
      ...(await listHitsPage(sql, scope, asked.limit)),
      counts: await countHits(sql, scope),
    }));
    const body = {
      script: script.text,
      ...counts,
      ...rowPage(total, asked.limit, hits.length),
      hits,
    };
    return Response.json(body, {
      headers: { [HEADER.date]: formatHttpDate(clock.now()), 'cache-control': 'no-store' },
    });
  };
}
