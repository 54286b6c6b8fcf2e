import {
  InvalidOptionError,
  HEADER,
  formatHttpDate,
  keyFor,
  type JournalStore,
  createJournal,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  verifyWebhook,
  WEBHOOK_HEADER,
  createLedger,
  type Ledger,
  type SqlHandle,
  observeLedger,
  type LedgerObserver,
  type Clock,
} from '../../../src/index.js';
import { createHash } from 'node:crypto';
import {
  methodNotAllowedResponse,
  unauthenticatedResponse,
  createIdempotencyMiddleware,
  answeredInsteadStatus,
  type ConnectionControl,
  defineProblem,
  problemResponse,
} from '../../../src/http/index.js';
import { readRowLimit, rowPage } from '../sql/row-limit.js';
import type { ServiceDatabase } from '../sql/service-database.js';
import { clearHits, countHits, insertHit, listHitsPage, purgeHits } from './hook-hits-table.js';
import type { HitAnswer, HookCounts, HookHit } from './hook-hit.js';
import {
  nextScriptAction,
  parseHookScript,
  SCRIPT_START,
  type HookScript,
  type ScriptAction,
  type ScriptCursor,
} from './hook-script.js';

export { HIT_ANSWERS, type HitAnswer, type HookCounts, type HookHit } from './hook-hit.js';
export type { ConnectionControl } from '../../../src/http/index.js';

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
   * Standard Webhooks secrets (`whsec_…`; several during a rotation). When set, every arrival must
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

/** A scripted refusal: the status the script names, in the one problem+json shape. */
const scriptedRefusal = (status: number) =>
  defineProblem('scripted_refusal', status, 'Scripted refusal');

/** What the receiver learnt about one arrival while the middleware and the effect ran. */
interface Arrival {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly key: string | null;
  scope?: string;
  bodySha256?: string;
  /** The script's answer, when the effect ran. */
  outcome?: { readonly answer: HitAnswer; readonly status: number; readonly retryAfter?: string };
  /** Set when the hit was written inside the effect's transaction (an ack commits with its hit). */
  hit?: HookHit;
  swallow?: boolean;
  /** Refused for its signature: answered 401 and recorded nowhere. */
  unsigned?: boolean;
}

/**
 * The webhook storm's hostile receiver (docs/origins.md, "The webhook storm") as a service on the
 * ledger and the idempotency middleware, like the dropbox and the notes: one request path (caller,
 * key, body read once, ledger, handler), keys in the shared ledger, hits in the service database.
 * An arrival without a key is answered from the script outside the ledger (the naive client's
 * deliveries), so the hit list shows what such a client costs.
 */
export function createHookService<Tx>(options: HookServiceOptions<Tx>): HookService {
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
      'a non-empty list of whsec_ secrets',
    );
  }
  const webhookToleranceMs = options.webhookToleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS;
  if (options.notifications !== undefined) {
    if (typeof options.notifications.store?.recordWithin !== 'function')
      throw new InvalidOptionError(
        'notifications.store',
        options.notifications.store,
        "a JournalStore on the ledger's database",
      );
    checkNotificationTarget(options.notifications.target); // fails here, not inside an ack's transaction
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

  const hitsPath = `${basePath}/debug/hits`;
  const resetPath = `${basePath}/debug/reset`;
  /** The script's position per caller. Kept by this process: it is the lab's scenery, not state to keep. */
  const cursors = new Map<string, ScriptCursor>();
  /** Per original request, what the middleware's steps learnt (scope, body hash). */
  const arrivals = new WeakMap<Request, Arrival>();

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
    validate: ({ request, body }) => {
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
    },
    unauthenticated: () => unauthenticatedResponse(),
    onKeyless: (_request, admitted) =>
      db.transaction((sql) => answerFromScript(admitted.value, sql)),
    onError,
  });

  /** Runs the script for one arrival; an ack and its hit are written with `sql` (the receipt's transaction when keyed). */
  async function answerFromScript(arrival: Arrival, sql: SqlHandle): Promise<Response> {
    const scope = arrival.scope!;
    const [action, next] = nextScriptAction(script, cursors.get(scope) ?? SCRIPT_START, arrival.at);
    cursors.set(scope, next);
    if (action.kind === 'swallow' || (action.status >= 200 && action.status < 300)) {
      const status = action.kind === 'swallow' ? 200 : action.status;
      const completion = (await countHits(sql, scope)).completions + 1;
      arrival.swallow = action.kind === 'swallow';
      arrival.outcome = { answer: arrival.swallow ? 'swallowed' : 'completed', status };
      arrival.hit = await insertHit(
        sql,
        scope,
        hitOf(arrival, arrival.outcome.answer, arrival.swallow ? null : status),
      );
      if (notifications) {
        const { journal, target } = notifications;
        const event = {
          event: 'hook.completed',
          scope,
          path: arrival.path,
          key: arrival.key,
          completion,
          at: arrival.at,
        };
        // Keyed by the arrival's own key when it has one, so a notification is owed once per key.
        const intentKey = keyFor(
          arrival.key === null ? { scope, seq: arrival.hit.seq } : { scope, key: arrival.key },
          'hook',
        );
        await journal.recordWithin(sql, {
          key: intentKey,
          target,
          body: JSON.stringify(event),
          headers: { 'content-type': 'application/json' },
          createdBy: 'oncely hook',
        });
      }
      const body =
        status === 204 || status === 205 ? null : JSON.stringify({ received: true, completion });
      return new Response(body, { status, headers: { [HEADER.contentType]: 'application/json' } });
    }
    return refusal(arrival, action);
  }

  function refusal(arrival: Arrival, action: Extract<ScriptAction, { kind: 'status' }>): Response {
    const retryAfter =
      action.retryAfterSeconds === undefined
        ? undefined
        : formatRetryAfter(action.retryAfterSeconds, arrival.at, retryAfterFormat);
    arrival.outcome =
      retryAfter === undefined
        ? { answer: 'rejected', status: action.status }
        : { answer: 'rejected', status: action.status, retryAfter };
    return problemResponse(
      scriptedRefusal(action.status),
      `hook script ${script.text} answers ${action.status} to this arrival`,
      {
        headers: retryAfter === undefined ? {} : { [HEADER.retryAfter]: retryAfter },
      },
    );
  }

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
      answerFromScript(context!.value, db.within(context!.tx)),
    );
    response.headers.set(HEADER.date, formatHttpDate(at));
    if (arrival.scope === undefined || arrival.unsigned) return response; // 401: nothing to record
    const hit = await recordAfter(arrival, response, request);
    if (hit !== undefined) options.onHit?.(hit, arrival.scope);
    if (arrival.swallow === true && hit?.answer === 'swallowed') return swallowed(connection);
    return response;
  }

  /** The hit of an arrival, unless the effect already wrote it with the ack. */
  async function recordAfter(
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

  async function debug(request: Request, path: string): Promise<Response> {
    const allowed = path === hitsPath ? 'GET, HEAD, DELETE' : 'POST';
    const method = request.method.toUpperCase();
    const isReset =
      (path === hitsPath && method === 'DELETE') || (path === resetPath && method === 'POST');
    const isList = path === hitsPath && (method === 'GET' || method === 'HEAD');
    if (!isReset && !isList) return methodNotAllowedResponse(allowed, `${path} answers ${allowed}`);
    const scope = scopeOf(request);
    if (scope === undefined || scope === '') return unauthenticatedResponse();
    if (isReset) {
      await reset(scope);
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
    cursors.delete(scope);
    await db.transaction((sql) => clearHits(sql, scope));
  }

  return {
    handle,
    script,
    routes: [
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
    ],
    hits: async (scope = DEFAULT_HOOK_OPTIONS.scope, limit = 1000) =>
      (await db.transaction((sql) => listHitsPage(sql, scope, limit))).hits,
    counts: (scope = DEFAULT_HOOK_OPTIONS.scope) => db.transaction((sql) => countHits(sql, scope)),
    reset,
    purgeExpired: () =>
      db.transaction((sql) => purgeHits(sql, clock.now() - ledger.options.retentionMs)),
  };
}

/** The challenge of a 401 for a webhook signature (RFC 9110 section 11.6.1 wants one on every 401). */
const WEBHOOK_CHALLENGE = 'Webhook-Signature realm="oncely"';

/**
 * Standard Webhooks names the delivery by `webhook-id`, the same on every attempt: the receiver
 * uses it as the idempotency key. A request carrying both headers must carry one value.
 */
function keyedByWebhookId(request: Request): Request | Response {
  const id = request.headers.get(WEBHOOK_HEADER.id);
  const key = request.headers.get(HEADER.idempotencyKey);
  if (id === null || key === id) return request;
  if (key !== null)
    return problemResponse(
      'invalid_key',
      `${HEADER.idempotencyKey} and ${WEBHOOK_HEADER.id} name different keys`,
    );
  const headers = new Headers(request.headers);
  headers.set(HEADER.idempotencyKey, id);
  const init: RequestInit & { duplex: 'half' } = {
    method: request.method,
    headers,
    body: request.body,
    signal: request.signal,
    duplex: 'half',
  };
  return new Request(request.url, init);
}

function hitOf(arrival: Arrival, answer: HitAnswer, status: number | null): Omit<HookHit, 'seq'> {
  const bodySha256 = answer === 'too_large' ? null : (arrival.bodySha256 ?? null);
  return {
    at: arrival.at,
    method: arrival.method,
    path: arrival.path,
    key: arrival.key,
    bodySha256,
    answer,
    status,
  };
}

/** What a response the middleware answered itself says about the arrival. */
function answerOf(response: Response): HitAnswer {
  if (response.headers.has(HEADER.idempotentReplayed)) return 'replayed';
  switch (response.status) {
    case 413:
      return 'too_large';
    case 400:
      return 'key_invalid';
    case 422:
      return 'key_reused';
    case 409:
      return 'in_flight';
    case 503:
      return 'unavailable';
    default:
      return 'failed';
  }
}

/**
 * The ack is committed with its receipt; the reply is lost. With a socket to drop, drop it;
 * without one (an adapter that gives none), break the reply mid-body, which a client reads as a
 * transport failure: the same unknown outcome.
 */
function swallowed(connection: ConnectionControl | undefined): Response {
  if (connection) {
    connection.drop();
    return new Response(null, { status: 204 });
  }
  return new Response(
    new ReadableStream({ start: (c) => c.error(new Error('hook: ack swallowed')) }),
    {
      status: 200,
      headers: { [HEADER.contentType]: 'application/json' },
    },
  );
}

/**
 * Retry-After in either form of RFC 9110 section 10.2.3. A date is counted from the same whole
 * second the Date header shows, so a client that measures it against Date gets exactly `seconds`.
 */
function formatRetryAfter(seconds: number, nowMs: number, format: RetryAfterFormat): string {
  return format === 'seconds'
    ? String(seconds)
    : formatHttpDate(Math.floor(nowMs / 1000) * 1000 + seconds * 1000);
}

/** The notifications' target: an absolute http(s) URL, as the journal takes it. */
function checkNotificationTarget(target: string): void {
  let url: URL | undefined;
  try {
    url = new URL(target);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new InvalidOptionError('target', String(target), 'an absolute http(s) URL');
}
