import {
  createJournal,
  createLedger,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  InvalidOptionError,
  observeLedger,
  type Clock,
  type Journal,
  type JournalStore,
  type Ledger,
  type LedgerObserver,
  type SqlHandle,
  webhookKeyKind,
} from 'oncely';
import { httpUrl } from '../../shared/http-url.js';
import type { ServiceDatabase } from '../sql/service-database.js';
import type { HookHit } from './hook-hit.js';
import { parseHookScript, type HookScript } from './hook-script.js';

export const RETRY_AFTER_FORMATS = ['seconds', 'http-date'] as const;
export type RetryAfterFormat = (typeof RETRY_AFTER_FORMATS)[number];

/** The methods a hook arrival may use; the debug routes answer GET, DELETE and POST of their own. */
export const HOOK_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface HookServiceOptions<Tx> {
  /**
   * The ledger the receiver's keys live in, shared with the other services: keys survive a
   * restart, two servers on one database agree, and `/ledger/receipts` lists them. The receiver
   * runs it with its own storage rule: only an ack (2xx) is stored; a scripted refusal is not,
   * so a retry under the same key meets the script again.
   */
  readonly ledger: Ledger<Tx>;
  /** Told each decision of the receiver's ledger (metrics). @default nothing */
  readonly observe?: LedgerObserver | undefined;
  /** The hits table lives in the ledger's database; an ack's hit commits with its receipt. */
  readonly db: ServiceDatabase<Tx>;
  /** The caller of a request; undefined is 401. @default every request is caller 'hook' (a receiver without callers) */
  readonly scopeOf?: (request: Request) => string | undefined;
  /** A script string (see {@link parseHookScript}) or a parsed one. @default '200' */
  readonly script?: string | HookScript;
  /** Times the hits, the throttle window and the Date header. @default the ledger's clock */
  readonly clock?: Clock;
  /** How Retry-After is written: delay-seconds, or an HTTP-date measured from this clock. @default 'seconds' */
  readonly retryAfterFormat?: RetryAfterFormat;
  /** Where the service is mounted, e.g. '/hooks': the debug routes live under it. @default '' */
  readonly basePath?: string;
  /** Largest body accepted, in bytes. @default 1048576 */
  readonly maxBodyBytes?: number;
  /** Called after each arrival is recorded: for a live log. */
  readonly onHit?: (hit: HookHit, scope: string) => void;
  /** Told about failures the client sees only as 500 or 503. @default nothing */
  readonly onError?: (error: unknown, request: Request) => void;
  /**
   * Standard Webhooks keys: `whsec_` secrets (`v1`) and `whpk_` ed25519 public keys (`v1a`),
   * several during a rotation (any one matching passes). When set, every arrival must
   * be signed: a missing header, a bad signature or a timestamp outside the tolerance is 401 and
   * changes nothing (no effect, no receipt, no hit). `webhook-id` is the idempotency key.
   */
  readonly webhookSecrets?: readonly string[];
  /**
   * A notification owed for every completed arrival, recorded in the journal inside the ack's own
   * transaction (the transactional outbox): the ack, its hit and the intent commit together, and
   * an outbox worker delivers it to `target`. The journal must live in the ledger's database.
   */
  readonly notifications?: { readonly store: JournalStore<SqlHandle>; readonly target: string };
  /** How far `webhook-timestamp` may be from this clock, either way. @default 300000 (the spec's five minutes) */
  readonly webhookToleranceMs?: number;
}

export const DEFAULT_HOOK_OPTIONS = {
  script: '200',
  retryAfterFormat: 'seconds',
  basePath: '',
  maxBodyBytes: 1_048_576,
  scope: 'hook',
} as const;

/** The options, checked, with their defaults in place: what the service runs on. */
export interface ResolvedHookOptions<Tx> {
  /** The receiver's own ledger: the shared one, storing acks only, observed when asked. */
  readonly ledger: Ledger<Tx>;
  readonly db: ServiceDatabase<Tx>;
  readonly script: HookScript;
  readonly clock: Clock;
  readonly retryAfterFormat: RetryAfterFormat;
  readonly basePath: string;
  readonly maxBodyBytes: number;
  readonly scopeOf: (request: Request) => string | undefined;
  readonly onError: (error: unknown, request: Request) => void;
  readonly webhookSecrets: readonly string[] | undefined;
  readonly webhookToleranceMs: number;
  readonly notifications:
    | { readonly journal: Journal<SqlHandle>; readonly target: string }
    | undefined;
}

/** Checks the options (a bad one throws InvalidOptionError, before any request) and fills in defaults. */
export function resolveHookOptions<Tx>(options: HookServiceOptions<Tx>): ResolvedHookOptions<Tx> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object {ledger, db}');
  const { db } = options;
  if (typeof options.ledger?.execute !== 'function')
    throw new InvalidOptionError('ledger', options.ledger, 'a Ledger from createLedger()');
  if (typeof db?.within !== 'function' || typeof db.transaction !== 'function') {
    throw new InvalidOptionError(
      'db',
      db,
      'a ServiceDatabase (sqliteServiceDatabase or postgresServiceDatabase)',
    );
  }
  const script =
    typeof options.script === 'object'
      ? options.script
      : parseHookScript(options.script ?? DEFAULT_HOOK_OPTIONS.script);
  const clock = options.clock ?? options.ledger.options.clock;
  const retryAfterFormat = options.retryAfterFormat ?? DEFAULT_HOOK_OPTIONS.retryAfterFormat;
  if (!RETRY_AFTER_FORMATS.includes(retryAfterFormat)) {
    throw new InvalidOptionError(
      'retryAfterFormat',
      retryAfterFormat,
      `one of ${RETRY_AFTER_FORMATS.join(', ')}`,
    );
  }
  const basePath = (options.basePath ?? DEFAULT_HOOK_OPTIONS.basePath).replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/'))
    throw new InvalidOptionError('basePath', basePath, "'' or a path starting with /");
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_HOOK_OPTIONS.maxBodyBytes;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0)
    throw new InvalidOptionError('maxBodyBytes', maxBodyBytes, 'an integer >= 0');
  const scopeOf = options.scopeOf ?? (() => DEFAULT_HOOK_OPTIONS.scope);
  const onError = options.onError ?? (() => {});
  const webhookSecrets = options.webhookSecrets;
  if (
    webhookSecrets !== undefined &&
    (!Array.isArray(webhookSecrets) ||
      webhookSecrets.length === 0 ||
      !webhookSecrets.every((x) => typeof x === 'string' && x !== ''))
  ) {
    throw new InvalidOptionError(
      'webhookSecrets',
      webhookSecrets,
      'a non-empty list of whsec_ secrets or whpk_ public keys',
    );
  }
  for (const key of webhookSecrets ?? []) webhookKeyKind(key);
  const webhookToleranceMs = options.webhookToleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS;
  if (options.notifications !== undefined) {
    if (typeof options.notifications.store?.recordWithin !== 'function')
      throw new InvalidOptionError(
        'notifications.store',
        options.notifications.store,
        "a JournalStore on the ledger's database",
      );
    httpUrl('target', options.notifications.target); // fails here, not inside an ack's transaction
  }
  const notifications =
    options.notifications === undefined
      ? undefined
      : {
          journal: createJournal({ store: options.notifications.store, clock }),
          target: options.notifications.target,
        };
  // Only an ack is a receipt: a scripted 429 or 503 stored for the retention would answer every
  // retry with "try later" forever; not stored, the key is released and the retry meets the script.
  const own = createLedger<Tx>({
    ...options.ledger.options,
    shouldStore: (receipt) => receipt.status >= 200 && receipt.status < 300,
  });
  const ledger = options.observe ? observeLedger(own, options.observe) : own;
  return {
    ledger,
    db,
    script,
    clock,
    retryAfterFormat,
    basePath,
    maxBodyBytes,
    scopeOf,
    onError,
    webhookSecrets,
    webhookToleranceMs,
    notifications,
  };
}
