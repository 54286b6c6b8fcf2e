import {
  type JournalStore,
  type SqlHandle,
  createLedger,
  type Ledger,
  type LedgerTuning,
  systemClock,
  type Clock,
  observeLedger,
} from 'oncely';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import {
  type ConnectionControl,
  type FetchHandler,
  methodNotAllowedResponse,
  problemResponse,
} from 'oncely/http';
import { createDropboxApp } from '../receivers/dropbox/dropbox-app.js';
import type { DropboxFault } from '../receivers/dropbox/dropbox-options.js';
import { setUpDropbox } from '../receivers/dropbox/dropbox-table.js';
import { setUpHookHits } from '../receivers/hook/hook-hits-table.js';
import type { HookScript } from '../receivers/hook/hook-script.js';
import { createNotesApp, setUpNotes } from '../receivers/notes/index.js';
import { readRowLimit, rowPage } from '../receivers/sql/row-limit.js';
import { scopeOfRequest, unauthenticatedResponse, type ScopeOf } from './auth.js';
import type { Callers } from './callers.js';
import { createHooksApp, type HooksApp } from './hooks-app.js';
import type { Backend } from './open-backend.js';
import { sitePages } from './pages.js';
import { listReceipts } from './receipt-listing.js';
import { createServerMetrics } from './server-metrics.js';
import { createRequestLog, type RequestLog } from './request-log.js';
import {
  STORE_PAGE_CSP,
  STORE_PAGE_HTML,
  STORE_PAGE_PATH,
  STORE_PAGE_SCRIPT,
  STORE_SCRIPT_PATH,
} from './store-page.js';

export interface ServerAppDeps<Tx> {
  readonly backend: Backend<Tx>;
  readonly callers: Callers;
  /** Leases, retention, close times, row stamps and hook timing. @default systemClock */
  readonly clock?: Clock;
  /** The request log; it also observes the ledgers. @default a log that writes nothing */
  readonly log?: RequestLog;
  /** The dropbox's fault for every request (`--fault`). @default none */
  readonly fault?: DropboxFault | undefined;
  /** When each assignment closes (`--closes-at`). @default never */
  readonly closesAtOf?: ((assignment: string) => number | undefined) | undefined;
  /** The hook receivers' script (`--hook-script`). @default '200' */
  readonly hookScript?: string | HookScript | undefined;
  /** The hook receiver's notifications (`--notify-url`): a journal beside the ledger and where to send. */
  readonly notifications?:
    | { readonly store: JournalStore<SqlHandle>; readonly target: string }
    | undefined;
  /** The built simulator page. @default web/dist of this package */
  readonly webDir?: string | undefined;
  /** The ledger's lease and retention. @default DEFAULT_LEDGER_OPTIONS */
  readonly ledgerTuning?: Partial<LedgerTuning>;
  /** Told about failures the client sees only as 500 or 503. @default nothing */
  readonly onError?: (error: unknown, request: Request) => void;
  /**
   * Notes can be read without a token (`--notes-public`, the lab's default). False: a read needs
   * a token like everything else. Edits always need one; the notes are shared by every caller.
   * @default true
   */
  readonly notesPublic?: boolean;
}

export interface ServerApp<Tx> {
  /** The whole server as a web-standard handler; the node adapter passes the connection. */
  readonly fetch: FetchHandler;
  readonly hono: Hono;
  readonly ledger: Ledger<Tx>;
  readonly hooks: HooksApp;
}

type ServerEnv = { Bindings: { connection?: ConnectionControl | undefined } };

/** The route families whose every answer is `Cache-Control: no-store` (see the middleware below). */
export const NO_STORE_PREFIXES = ['/dropbox', '/notes', '/hooks', '/ledger'] as const;

/**
 * The composition root: one ledger over the backend's store, and the services mounted on it
 * (dropbox, notes, hooks), the store view, the site pages, health. Creates the services' tables
 * before it returns. Every route outside the services answers problem+json for a miss: 404 for
 * an unknown path, 405 (with Allow) for a known path and another method.
 */
export async function createServerApp<Tx>(deps: ServerAppDeps<Tx>): Promise<ServerApp<Tx>> {
  const { backend, callers } = deps;
  const clock = deps.clock ?? systemClock;
  const log = deps.log ?? createRequestLog({ clock });
  const onError = deps.onError ?? (() => {});
  const baseScope = scopeOfRequest(callers);
  const scopeOf: ScopeOf = (request) => {
    const caller = baseScope(request);
    if (caller !== undefined) log.note({ caller });
    return caller;
  };
  const ledger = createLedger<Tx>({ ...deps.ledgerTuning, store: backend.store, clock });
  const observed = log.observe(ledger);
  const metrics = createServerMetrics(() => ledger.sweepProgress());
  log.listen(metrics.countRequest);

  await setUpDropbox(backend.db);
  await setUpNotes(backend.db as Parameters<typeof setUpNotes>[0], { clock });

  await setUpHookHits(backend.db);
  const hooks = createHooksApp({
    ledger,
    observe: metrics.ledgerObserver('hooks'),
    db: backend.db,
    scopeOf,
    clock,
    basePath: '/hooks',
    onHit: (hit) => log.noteHit(hit.answer),
    onError,
    ...(deps.hookScript === undefined ? {} : { script: deps.hookScript }),
    ...(deps.notifications === undefined ? {} : { notifications: deps.notifications }),
  });
  const app = new Hono<ServerEnv>();
  // No HSTS: the server speaks plain HTTP on loopback; a browser would pin localhost to HTTPS.
  app.use('*', secureHeaders({ strictTransportSecurity: false }));
  app.use('*', noStoreUnderServices);

  app.get('/healthz', () => healthCheck(backend));

  app.get('/ledger/receipts', (c) => receiptsAnswer(c, backend, ledger, scopeOf));

  app.get('/metrics', () => metrics.respond());

  app.route(
    '/dropbox',
    createDropboxApp({
      ledger: observeLedger(observed, metrics.ledgerObserver('dropbox')),
      db: backend.db,
      scopeOf,
      clock,
      fault: deps.fault,
      closesAtOf: deps.closesAtOf,
      onError,
    }),
  );
  if (deps.notesPublic === false) {
    app.on(['GET', 'HEAD'], '/notes/*', async (c, next) =>
      scopeOf(c.req.raw) === undefined ? unauthenticatedResponse() : next(),
    );
  }
  app.route(
    '/notes',
    createNotesApp({
      ledger: observeLedger(observed, metrics.ledgerObserver('notes')),
      db: backend.db,
      scopeOf,
      clock,
      onError,
    }),
  );
  app.route('/hooks', hooks.app);

  mountStorePage(app);
  app.get(STORE_SCRIPT_PATH, (c) =>
    c.body(STORE_PAGE_SCRIPT, 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'no-store',
    }),
  );

  refuseAllButGet(app, [
    '/healthz',
    '/metrics',
    '/ledger/receipts',
    STORE_PAGE_PATH,
    STORE_SCRIPT_PATH,
  ]);

  app.get('*', sitePages(deps.webDir === undefined ? {} : { webDir: deps.webDir }));

  app.notFound((c) => problemResponse('not_found', `no route for ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    onError(error, c.req.raw);
    return problemResponse('internal_error', 'the request failed');
  });

  const fetch = log.wrap((request, connection) => app.fetch(request, { connection }));
  return { fetch, hono: app as unknown as Hono, ledger, hooks };
}

/** `GET /ledger/receipts`: the caller's own receipts, a page of them, and the sweep's counts. */
async function receiptsAnswer<Tx>(
  c: Context<ServerEnv>,
  backend: Backend<Tx>,
  ledger: Ledger<Tx>,
  scopeOf: ScopeOf,
): Promise<Response> {
  const caller = scopeOf(c.req.raw);
  if (caller === undefined) return unauthenticatedResponse();
  const asked = readRowLimit(new URL(c.req.url));
  if (asked.kind === 'refused') return asked.response;
  const { receipts, total } = await listReceipts(backend.db, backend, caller, asked.limit);
  // The retention sweep's progress is the server's, not the caller's: counts only, no keys.
  const sweep = ledger.sweepProgress();
  return c.json({ caller, ...rowPage(total, asked.limit, receipts.length), receipts, sweep }, 200, {
    'cache-control': 'no-store',
  });
}

// Cache-Control: no-store on every answer under the caller-scoped routes, first answers and
// replays alike: they carry receipts, a caller's rows or hook acks, which no shared cache may
// keep and hand to someone else (RFC 9111 section 5.2.2.5). Here, in the server's chain, and not
// in the idempotency middleware's replay path: a replay sends the receipt's allow-listed headers
// (DEFAULT_RECEIPT_HEADERS), so adding cache-control there would mend only receipts stored from
// now on, and only for handlers that remember to set it (the notes' 200 never did); and the
// middleware is a library piece whose users choose their own caching, while "nothing under
// these paths is cacheable" is this server's rule, which also covers answers no ledger touched
// (401, 404, lookups, dumps, hook acks). Set last, after every layer has answered, so no route
// can forget it.
const noStoreUnderServices: MiddlewareHandler<ServerEnv> = async (c, next) => {
  await next();
  if (
    NO_STORE_PREFIXES.some((prefix) => c.req.path === prefix || c.req.path.startsWith(`${prefix}/`))
  )
    c.res.headers.set('cache-control', 'no-store');
};

/** `GET /healthz`: 200 when the store answers a query, else 503 with Retry-After. */
async function healthCheck<Tx>(backend: Backend<Tx>): Promise<Response> {
  try {
    await backend.db.transaction((sql) => sql.all('SELECT 1'));
    return Response.json(
      { status: 'ok', store: backend.kind },
      { headers: { 'cache-control': 'no-store' } },
    );
  } catch (error) {
    return problemResponse(
      'ledger_unavailable',
      `the ${backend.kind} store does not answer: ${error instanceof Error ? error.message : String(error)}`,
      { retryAfterMs: 1000 },
    );
  }
}

/** The store view: its page and its script, never cached. */
function mountStorePage(app: Hono<ServerEnv>): void {
  app.get(STORE_PAGE_PATH, (c) =>
    c.html(STORE_PAGE_HTML, 200, {
      'content-security-policy': STORE_PAGE_CSP,
      'cache-control': 'no-store',
    }),
  );
}

/** The server's read-only paths: another method is 405 with Allow. */
function refuseAllButGet(app: Hono<ServerEnv>, paths: readonly string[]): void {
  for (const path of paths)
    app.all(path, () => methodNotAllowedResponse('GET, HEAD', `${path} answers GET, HEAD`));
}
