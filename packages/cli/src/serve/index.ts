/**
 * `oncely serve`, as a library: the composition root that puts the dropbox, notes and hook
 * services on one ledger (SQLite or PostgreSQL), behind bearer-token callers, with a request log,
 * a store view and a graceful shutdown.
 *
 * ```ts
 * const server = await startServer({ port: 0, dataDir: 'oncely-data', callers: createCallers({ devToken }) });
 * console.log(server.url);
 * await server.close(); // finishes the requests in flight, then closes the store
 * ```
 */
export {
  startServer,
  isLoopback,
  DEFAULT_SERVER_OPTIONS,
  type ServerOptions,
  type RunningServer,
} from './start-server.js';
export { createServerApp, type ServerApp, type ServerAppDeps } from './create-server-app.js';
export {
  openBackend,
  DEFAULT_BACKEND_OPTIONS,
  type Backend,
  type AnyBackend,
  type BackendOptions,
} from './open-backend.js';
export {
  createCallers,
  parseTokenPairs,
  generateDevToken,
  bearerToken,
  type Callers,
  type CallersOptions,
} from './callers.js';
export { scopeOfRequest, unauthenticatedResponse, BEARER_CHALLENGE, type ScopeOf } from './auth.js';
export {
  createRequestLog,
  REQUEST_OUTCOMES,
  type RequestLog,
  type RequestLogLine,
  type RequestLogOptions,
  type RequestOutcome,
} from './request-log.js';
export { listReceipts, type ReceiptListing } from './receipt-listing.js';
export { createHooksApp, type HooksApp, type HooksAppOptions } from './hooks-app.js';
export { sitePages, DEFAULT_WEB_DIR, type SitePagesOptions } from './pages.js';
export { STORE_PAGE_PATH, STORE_SCRIPT_PATH, STORE_FEEDS } from './store-page.js';
