import { Hono } from 'hono';
import { systemClock, type Clock, type Journal, type Ledger } from 'oncely';
import { problemResponse, unauthenticatedResponse } from 'oncely/http';
import type { Callers } from '../serve/callers.js';
import { scopeOfRequest } from '../serve/auth.js';
import { writeGuard, type ApiEnv } from './api-env.js';
import { API_PROBLEMS } from './api-problems.js';
import { endpointRoutes } from './endpoint-routes.js';
import { messageRoutes } from './message-routes.js';
import { OPENAPI_DOCUMENT } from './openapi-document.js';
import type { OutboxMetrics } from './outbox-metrics.js';

export interface OutboxApiAppOptions {
  readonly journal: Journal<unknown>;
  /** The API's own receipts, in the journal's database (outbox-api-ledger.ts). */
  readonly ledger: Ledger<unknown>;
  readonly callers: Callers;
  /** Served at GET /metrics when given. */
  readonly metrics?: OutboxMetrics | undefined;
  /** @default systemClock */
  readonly clock?: Clock;
}

/**
 * `oncely outbox serve`'s app: /v1 behind bearer tokens (the callers of `oncely serve`: a tokens
 * file, ONCELY_TOKENS, a dev token), each write through oncely's ledger under its own
 * Idempotency-Key; the OpenAPI document and the metrics outside, as `oncely serve` has them.
 */
export function createOutboxApiApp(options: OutboxApiAppOptions): Hono<ApiEnv> {
  const { journal, ledger, callers, metrics } = options;
  const clock = options.clock ?? systemClock;
  const scopeOf = scopeOfRequest(callers);
  const app = new Hono<ApiEnv>();
  app.get('/openapi.json', (c) => c.json(OPENAPI_DOCUMENT, 200, { 'cache-control': 'no-cache' }));
  if (metrics) app.get('/metrics', () => metrics.respond());
  app.use('/v1/*', async (c, next) => {
    if (scopeOf(c.req.raw) === undefined)
      return unauthenticatedResponse('a bearer token of this server is needed');
    return next();
  });
  const deps = { journal, write: writeGuard(ledger, scopeOf) };
  app.route('/v1/endpoints', endpointRoutes(deps, clock));
  app.route('/v1', messageRoutes(deps));
  app.notFound((c) =>
    problemResponse(API_PROBLEMS.notFound, `no route ${c.req.method} ${c.req.path}`),
  );
  app.onError((error) =>
    problemResponse('internal_error', String((error as Error).message ?? error)),
  );
  return app;
}
