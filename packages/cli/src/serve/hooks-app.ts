import { Hono } from 'hono';
import type { ConnectionControl } from 'oncely/http';
import type { Ledger, LedgerObserver, Clock } from 'oncely';
import type { HookScript } from '../receivers/hook/hook-script.js';
import {
  createHookService,
  type HookHit,
  type HookService,
  type HookServiceOptions,
} from '../receivers/hook/hook-service.js';
import type { ServiceDatabase } from '../receivers/sql/service-database.js';
import type { ScopeOf } from './auth.js';

export interface HooksAppOptions<Tx> {
  /** The server's one ledger: hook keys sit beside the dropbox's and the notes'. */
  readonly ledger: Ledger<Tx>;
  /** Told each decision of the receivers' ledger (the server's metrics). @default nothing */
  readonly observe?: LedgerObserver | undefined;
  /** The hits table lives here (set up with setUpHookHits before the first request). */
  readonly db: ServiceDatabase<Tx>;
  readonly scopeOf: ScopeOf;
  /** Every caller's receiver answers from this script (the webhook storm's grammar). @default '200' */
  readonly script?: string | HookScript;
  /** @default the ledger's clock */
  readonly clock?: Clock;
  /** Where the app is mounted: the receivers' debug routes live under it. @default '/hooks' */
  readonly basePath?: string;
  /** Told about each arrival (for the request log). */
  readonly onHit?: (hit: HookHit, caller: string) => void;
  /** Told about failures the client sees only as 500 or 503. @default nothing */
  readonly onError?: (error: unknown, request: Request) => void;
  /** A notification owed for each completed arrival, recorded with its ack (see createHookService). */
  readonly notifications?: HookServiceOptions<Tx>['notifications'];
}

export interface HooksApp {
  readonly app: Hono;
  readonly script: HookScript;
  readonly service: HookService;
  /** The caller's newest arrivals (empty for a caller that sent none). */
  hitsOf(caller: string, limit?: number): Promise<readonly HookHit[]>;
}

/**
 * The hostile hook receiver on the server (docs/origins.md, "The webhook storm"): keys in the
 * server's ledger and hits in its database, both scoped by caller like every other key (caller A
 * can neither replay nor see caller B's acks). A token is required, for the hooks and for
 * `debug/hits` alike; `swallow` drops the connection the node adapter passes as `env.connection`.
 */
export function createHooksApp<Tx>(options: HooksAppOptions<Tx>): HooksApp {
  const service = createHookService<Tx>({
    ledger: options.ledger,
    observe: options.observe,
    db: options.db,
    scopeOf: options.scopeOf,
    basePath: options.basePath ?? '/hooks',
    ...(options.script === undefined ? {} : { script: options.script }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onHit === undefined ? {} : { onHit: options.onHit }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
    ...(options.notifications === undefined ? {} : { notifications: options.notifications }),
  });
  const app = new Hono<{ Bindings: { connection?: ConnectionControl | undefined } }>();
  app.all('*', (c) => service.handle(c.req.raw, c.env?.connection));
  return {
    app: app as unknown as Hono,
    script: service.script,
    service,
    hitsOf: (caller, limit) => service.hits(caller, limit),
  };
}
