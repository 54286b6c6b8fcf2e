import { createHash } from 'node:crypto';
import { formatHttpDate, HEADER, verifyWebhook } from 'oncely';
import {
  answeredInsteadStatus,
  createIdempotencyMiddleware,
  methodNotAllowedResponse,
  unauthenticatedResponse,
  type ConnectionControl,
  type Validate,
} from 'oncely/http';
import { createScriptAnswers } from './hook-answers.js';
import {
  answerOf,
  hitOf,
  keyedByWebhookId,
  swallowed,
  WEBHOOK_CHALLENGE,
  type Arrival,
} from './hook-arrival.js';
import { createHookDebug } from './hook-debug.js';
import type { HookCounts, HookHit } from './hook-hit.js';
import { clearHits, countHits, insertHit, listHitsPage, purgeHits } from './hook-hits-table.js';
import {
  DEFAULT_HOOK_OPTIONS,
  HOOK_METHODS,
  resolveHookOptions,
  type HookServiceOptions,
  type ResolvedHookOptions,
} from './hook-options.js';
import type { ServiceDatabase } from '../sql/service-database.js';
import type { HookScript } from './hook-script.js';

export { HIT_ANSWERS, type HitAnswer, type HookCounts, type HookHit } from './hook-hit.js';
export type { ConnectionControl } from 'oncely/http';
export {
  DEFAULT_HOOK_OPTIONS,
  HOOK_METHODS,
  RETRY_AFTER_FORMATS,
  type HookServiceOptions,
  type RetryAfterFormat,
} from './hook-options.js';

export interface HookRoute {
  readonly method: string;
  readonly path: string;
  readonly description: string;
}

export interface HookService {
  /** Web-standard handler. Pass `connection` so `swallow` can drop it; without one the body errors mid-reply. */
  handle(request: Request, connection?: ConnectionControl): Promise<Response>;
  readonly routes: readonly HookRoute[];
  readonly script: HookScript;
  /** The caller's newest `limit` hits (default 1000), oldest first. */
  hits(scope?: string, limit?: number): Promise<readonly HookHit[]>;
  counts(scope?: string): Promise<HookCounts>;
  /** Clears the caller's hits and script position (its keys stay in the ledger, like every receipt). */
  reset(scope?: string): Promise<void>;
  /** Deletes hits older than the ledger's retention; run by the server's retention sweep. */
  purgeExpired(): Promise<number>;
}

/**
 * The webhook storm's hostile receiver (docs/origins.md, "The webhook storm") as a service on the
 * ledger and the idempotency middleware, like the dropbox and the notes: one request path (caller,
 * key, body read once, ledger, handler), keys in the shared ledger, hits in the service database.
 * An arrival without a key is answered from the script outside the ledger (the naive client's
 * deliveries), so the hit list shows what such a client costs.
 */
export function createHookService<Tx>(options: HookServiceOptions<Tx>): HookService {
  const resolved = resolveHookOptions(options);
  const { ledger, db, script, clock, maxBodyBytes, scopeOf, onError, webhookSecrets } = resolved;
  const { basePath } = resolved;

  const hitsPath = `${basePath}/debug/hits`;
  const resetPath = `${basePath}/debug/reset`;
  const answers = createScriptAnswers(resolved);
  /** Per original request, what the middleware's steps learnt (scope, body hash). */
  const arrivals = new WeakMap<Request, Arrival>();

  const debug = createHookDebug({ hitsPath, resetPath, db, script, clock, scopeOf, reset });

  const middleware = createIdempotencyMiddleware<Tx, Arrival>({
    ledger,
    methods: [...HOOK_METHODS],
    maxBodyBytes,
    scopeOf: (request) => {
      const scope = scopeOf(request);
      const arrival = arrivals.get(request);
      if (arrival !== undefined && scope !== undefined) arrival.scope = scope;
      return scope;
    },
    validate: arrivalValidator(resolved, arrivals),
    unauthenticated: () => unauthenticatedResponse(),
    onKeyless: (_request, admitted) => db.transaction((sql) => answers.answer(admitted.value, sql)),
    onError,
  });

  async function arrive(
    original: Request,
    path: string,
    connection: ConnectionControl | undefined,
  ): Promise<Response> {
    const at = clock.now();
    const keyed = webhookSecrets === undefined ? original : keyedByWebhookId(original);
    if (keyed instanceof Response) return keyed;
    const request = keyed;
    const arrival: Arrival = {
      at,
      method: request.method,
      path,
      key: request.headers.get(HEADER.idempotencyKey),
    };
    arrivals.set(request, arrival);
    const response = await middleware(request, (_forwarded, context) =>
      answers.answer(context!.value, db.within(context!.tx)),
    );
    response.headers.set(HEADER.date, formatHttpDate(at));
    if (arrival.scope === undefined || arrival.unsigned) return response; // 401: nothing to record
    const hit = await recordHit(db, onError, arrival, response, request);
    if (hit !== undefined) options.onHit?.(hit, arrival.scope);
    if (arrival.swallow === true && hit?.answer === 'swallowed') return swallowed(connection);
    return response;
  }

  async function handle(request: Request, connection?: ConnectionControl): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === hitsPath || path === resetPath) return debug(request, path);
    if (!(HOOK_METHODS as readonly string[]).includes(request.method.toUpperCase())) {
      return methodNotAllowedResponse(
        HOOK_METHODS.join(', '),
        `a hook answers ${HOOK_METHODS.join(', ')}`,
      );
    }
    return arrive(request, path, connection);
  }

  async function reset(scope: string = DEFAULT_HOOK_OPTIONS.scope): Promise<void> {
    answers.forget(scope);
    await db.transaction((sql) => clearHits(sql, scope));
  }

  return {
    handle,
    script,
    routes: hookRoutes(basePath, hitsPath, resetPath),
    hits: async (scope = DEFAULT_HOOK_OPTIONS.scope, limit = 1000) =>
      (await db.transaction((sql) => listHitsPage(sql, scope, limit))).hits,
    counts: (scope = DEFAULT_HOOK_OPTIONS.scope) => db.transaction((sql) => countHits(sql, scope)),
    reset,
    purgeExpired: () =>
      db.transaction((sql) => purgeHits(sql, clock.now() - ledger.options.retentionMs)),
  };
}

/**
 * The middleware's validate step: the arrival's signature when the receiver has secrets (refused:
 * 401, recorded nowhere), then the body's hash for its hit.
 */
function arrivalValidator<Tx>(
  options: ResolvedHookOptions<Tx>,
  arrivals: WeakMap<Request, Arrival>,
): Validate<Arrival> {
  const { webhookSecrets, webhookToleranceMs, clock } = options;
  return ({ request, body }) => {
    const arrival = arrivals.get(request);
    if (arrival === undefined)
      throw new Error('hook: a request reached the middleware without its arrival record');
    if (webhookSecrets !== undefined) {
      const verified = verifyWebhook(
        webhookSecrets,
        request.headers,
        new TextDecoder().decode(body),
        clock.now(),
        webhookToleranceMs,
      );
      if (!verified.ok) {
        arrival.unsigned = true;
        return {
          ok: false,
          response: unauthenticatedResponse(
            `webhook signature refused (${verified.reason}): ${verified.detail}`,
            WEBHOOK_CHALLENGE,
          ),
        };
      }
    }
    arrival.bodySha256 = createHash('sha256').update(body).digest('hex');
    return { ok: true, value: arrival };
  };
}

/** The hit of an arrival, unless the effect already wrote it with the ack. */
async function recordHit<Tx>(
  db: ServiceDatabase<Tx>,
  onError: (error: unknown, request: Request) => void,
  arrival: Arrival,
  response: Response,
  request: Request,
): Promise<HookHit | undefined> {
  const { outcome } = arrival;
  // The effect's answer stands only if it is what was sent (a lost lease or a failed commit is not).
  const effectAnswered =
    outcome !== undefined &&
    outcome.status === response.status &&
    !response.headers.has(HEADER.idempotentReplayed);
  if (effectAnswered && arrival.hit !== undefined) return arrival.hit;
  const answer = effectAnswered ? outcome.answer : answerOf(response);
  // What was sent: the server's own answer when it answered in the handler's place (a 408 for
  // a body that never came), not the failure the handler was left with.
  const status =
    answer === 'swallowed' ? null : (answeredInsteadStatus(request.signal) ?? response.status);
  const retryAfter = response.headers.get(HEADER.retryAfter) ?? undefined;
  const base = hitOf(arrival, answer, status);
  try {
    return await db.transaction((sql) =>
      insertHit(sql, arrival.scope!, retryAfter === undefined ? base : { ...base, retryAfter }),
    );
  } catch (error) {
    onError(error, request); // the answer stands; only its line in the hit list is missing
    return undefined;
  }
}

/** What the service answers where, for the server's route list. */
function hookRoutes(basePath: string, hitsPath: string, resetPath: string): HookRoute[] {
  return [
    {
      method: 'GET',
      path: `${hitsPath}[?limit=N]`,
      description: 'the newest hits, the counts and the script as JSON',
    },
    { method: 'DELETE', path: hitsPath, description: 'clear the hits and the script position' },
    { method: 'POST', path: resetPath, description: 'the same (an older spelling, kept)' },
    {
      method: HOOK_METHODS.join('|'),
      path: `${basePath}/*`,
      description: 'any other request: answered by the script, then recorded',
    },
  ];
}
