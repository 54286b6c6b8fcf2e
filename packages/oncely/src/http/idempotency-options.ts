import { InvalidOptionError } from '../contract/errors.js';
import { DEFAULT_RECEIPT_HEADERS } from '../contract/receipt.js';
import type { Ledger } from '../ledger/ledger.js';
import { unauthenticatedResponse } from './common-responses.js';
import { logOncelyError, logOncelyWarning } from './log-oncely-error.js';
import { checkMinKeyLength } from './key-header.js';
import { fingerprintOfPayload } from './payload-fingerprint.js';
import { DEFAULT_PROBLEM_TYPE_BASE } from './problem.js';
import { requestFingerprint, type FingerprintInput } from './request-fingerprint.js';
import { warnIfUnscoped } from './unscoped-warning.js';
import type { AdmittedRequest, Validate } from './request-validation.js';

export interface IdempotencyTuning {
  /** Methods that must carry an Idempotency-Key and go through the ledger. @default ['POST', 'PATCH'] */
  readonly methods: readonly string[];
  /** Larger bodies get 413 before the ledger is touched. @default 1048576 (1 MiB) */
  readonly maxBodyBytes: number;
  /** Response headers a receipt keeps and a replay sends. @default DEFAULT_RECEIPT_HEADERS */
  readonly receiptHeaders: readonly string[];
  /**
   * What makes two requests "the same payload", as a whole fingerprint string (hash it yourself).
   * To say only which part of the body counts, use `payloadOf`. @default requestFingerprint
   * (method, path+query, body bytes)
   */
  readonly fingerprintOf: (input: FingerprintInput) => string | Promise<string>;
  /**
   * The shortest key accepted, in characters: a shorter one is 400 invalid_key, whose detail names
   * this option. The draft's security considerations (section 5) warn that low-entropy keys let
   * one client guess another's; a UUID is 36. @default 1 (any non-empty key)
   */
  readonly minKeyLength: number;
  /** Retry-After sent with 503 when the ledger is down. @default 1000 */
  readonly unavailableRetryAfterMs: number;
  /**
   * Prefix of the `type` URI of the middleware's own problems; the kind follows it. A link
   * (http or https) is repeated as `Link: <...>; rel="describedby"`.
   * @default DEFAULT_PROBLEM_TYPE_BASE, the sections of docs/ledger.md
   */
  readonly problemTypeBase: string;
  /**
   * Told, once, about a risky setup when the middleware is made (no `scopeOf`).
   * @default logOncelyWarning: one line on stderr
   */
  readonly onWarning: (message: string) => void;
  /**
   * Told about handler errors and ledger outages, which the client sees only as 500/503.
   * @default logOncelyError: one line on stderr with the method, the URL and the stack
   */
  readonly onError: (error: unknown, request: Request) => void;
  /**
   * The 401 for a request without a caller. It must carry a WWW-Authenticate challenge
   * (RFC 9110 section 15.5.2). @default unauthenticatedResponse (a Bearer challenge)
   */
  readonly unauthenticated: (request: Request) => Response;
  /**
   * What a POST/PATCH without an Idempotency-Key gets: `'refuse'` answers 400 missing_key;
   * `'pass-through'` runs the handler outside the ledger (context undefined), as before oncely,
   * for a gradual roll-out while clients learn to send keys. @default 'refuse'
   */
  readonly missingKey: MissingKeyMode;
  /**
   * How the handler's writes reach the ledger's transaction:
   * - `'claimed'`: the key is claimed (and leased) before the handler runs; the handler writes
   *   through `context.sql` or `context.tx` in the transaction of the receipt, awaiting results,
   *   and may call anything else (a duplicate in flight gets 409 and never runs it).
   * - `'deferred'`: no claim, no lease: the handler runs at once, and its receipt and writes
   *   commit in one transaction only if the key is still free; else they roll back and the key
   *   answers as it would have (replay, 422, 409). So the handler does nothing that leaves a
   *   trace outside that transaction (no HTTP call, no message), and takes no step. On the
   *   PostgreSQL store it writes only with `context.sql.defer()` (no transaction is open while it
   *   runs; the commit is shared with concurrent requests) and a duplicate arriving meanwhile
   *   runs the handler too, its writes never commit, and it answers as a replay. On an ORM store
   *   (createOrmLedgerStore) it runs in the ORM's transaction and writes through `context.tx` or
   *   `context.sql`, awaiting results; a duplicate in the same process gets 409 (docs/orm.md).
   *   Elsewhere it runs the claimed way.
   * @default 'claimed'
   */
  readonly writes: WriteMode;
}

export const WRITE_MODES = ['claimed', 'deferred'] as const;
export type WriteMode = (typeof WRITE_MODES)[number];

export const MISSING_KEY_MODES = ['refuse', 'pass-through'] as const;
export type MissingKeyMode = (typeof MISSING_KEY_MODES)[number];

/** The scope of every request when no `scopeOf` is given: a single-tenant app has one caller. */
export const SINGLE_TENANT_SCOPE = 'default';

export interface IdempotencyOptions<Tx, V = unknown> extends Partial<IdempotencyTuning> {
  readonly ledger: Ledger<Tx>;
  /**
   * The authenticated caller of a request, from the app's own authentication (a bearer token's
   * owner, a session's account). Keys are scoped by it, so one caller can never replay another's
   * receipt. Undefined means unauthenticated: 401. @default every request is the one caller
   * SINGLE_TENANT_SCOPE ('default'): for a single-tenant app; a multi-tenant one must scope keys.
   */
  readonly scopeOf?:
    | ((request: Request) => string | undefined | Promise<string | undefined>)
    | undefined;
  /**
   * The service's own check of the body, after the key and before the ledger: its refusal is
   * answered and nothing is stored; its value reaches the handler as `context.value` and the
   * fingerprint as `input.value`. @default every body is accepted, value undefined
   */
  readonly validate?: Validate<V>;
  /**
   * Answers a request that carries no Idempotency-Key outside the ledger (the hook receiver
   * records keyless deliveries). It is still scoped, read once and validated first.
   * @default none: a missing key is 400 missing_key
   */
  readonly onKeyless?:
    | ((request: Request, admitted: AdmittedRequest<V>) => Response | Promise<Response>)
    | undefined;
  /**
   * What identifies a request's payload, when not all of its body does: a JSON value (canonicalised,
   * RFC 8785, then hashed with the method and the path and query), for instance the parsed body
   * without the client's own timestamp, so a retry that stamps a new `sentAt` still replays while
   * any other change is a 422. A function rather than a list of fields to leave out: it reaches
   * nested fields, headers and `validate`'s value alike, and is typed by the caller's own body
   * type. Cannot be combined with `fingerprintOf`, which replaces the whole fingerprint.
   * @default none: the body's bytes (requestFingerprint)
   */
  readonly payloadOf?: ((input: FingerprintInput) => unknown) | undefined;
}

export const DEFAULT_IDEMPOTENCY_OPTIONS: IdempotencyTuning = {
  methods: ['POST', 'PATCH'],
  maxBodyBytes: 1_048_576,
  receiptHeaders: DEFAULT_RECEIPT_HEADERS,
  fingerprintOf: requestFingerprint,
  unavailableRetryAfterMs: 1000,
  problemTypeBase: DEFAULT_PROBLEM_TYPE_BASE,
  minKeyLength: 1,
  onWarning: logOncelyWarning,
  onError: logOncelyError,
  unauthenticated: () =>
    unauthenticatedResponse(
      'this request needs an authenticated caller: keys are scoped by caller',
    ),
  missingKey: 'refuse',
  writes: 'claimed',
};

export interface ResolvedIdempotencyOptions<Tx, V = unknown> extends IdempotencyTuning {
  readonly ledger: Ledger<Tx>;
  readonly scopeOf: (request: Request) => string | undefined | Promise<string | undefined>;
  readonly validate: Validate<V>;
  readonly onKeyless: IdempotencyOptions<Tx, V>['onKeyless'];
  readonly methodSet: ReadonlySet<string>;
  readonly receiptHeaderSet: ReadonlySet<string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Fills defaults and checks every option once; errors name the option and the allowed range.
 * `scoped` says whether the caller gave a `scopeOf` (an adapter reads its own before this):
 * without one, `onWarning` is told so once.
 */
export function resolveIdempotencyOptions<Tx, V = unknown>(
  options: IdempotencyOptions<Tx, V>,
  scoped: boolean = options?.scopeOf !== undefined,
): ResolvedIdempotencyOptions<Tx, V> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', options, 'an object with ledger and scopeOf');
  const o = { ...DEFAULT_IDEMPOTENCY_OPTIONS, ...definedOnly(options) } as IdempotencyTuning &
    IdempotencyOptions<Tx, V>;
  if (typeof o.ledger?.execute !== 'function')
    throw new InvalidOptionError('ledger', o.ledger, 'a Ledger from createLedger()');
  const scopeOf = o.scopeOf ?? singleTenant;
  if (typeof scopeOf !== 'function')
    throw new InvalidOptionError('scopeOf', o.scopeOf, 'a function (request) => scope | undefined');
  if (!MISSING_KEY_MODES.includes(o.missingKey))
    throw new InvalidOptionError(
      'missingKey',
      o.missingKey,
      `one of ${MISSING_KEY_MODES.join(', ')}`,
    );
  if (!WRITE_MODES.includes(o.writes))
    throw new InvalidOptionError('writes', o.writes, `one of ${WRITE_MODES.join(', ')}`);
  if (o.missingKey === 'pass-through' && o.onKeyless !== undefined) {
    throw new InvalidOptionError(
      'missingKey',
      o.missingKey,
      "'refuse' when onKeyless answers keyless requests",
    );
  }
  checkMethods(o.methods);
  if (!Number.isSafeInteger(o.maxBodyBytes) || o.maxBodyBytes < 0) {
    throw new InvalidOptionError('maxBodyBytes', o.maxBodyBytes, 'a whole number of bytes >= 0');
  }
  if (
    !Array.isArray(o.receiptHeaders) ||
    !o.receiptHeaders.every((h) => typeof h === 'string' && TOKEN.test(h))
  ) {
    throw new InvalidOptionError('receiptHeaders', o.receiptHeaders, 'an array of header names');
  }
  if (o.receiptHeaders.some((h) => h.toLowerCase() === 'set-cookie')) {
    throw new InvalidOptionError(
      'receiptHeaders',
      o.receiptHeaders,
      'header names other than set-cookie (a replay must not hand out a session)',
    );
  }
  if (typeof o.fingerprintOf !== 'function')
    throw new InvalidOptionError('fingerprintOf', o.fingerprintOf, 'a function (input) => string');
  const fingerprintOf = fingerprintOfPayload(o.payloadOf, options.fingerprintOf, o.fingerprintOf);
  checkMinKeyLength(o.minKeyLength);
  if (!Number.isSafeInteger(o.unavailableRetryAfterMs) || o.unavailableRetryAfterMs < 0) {
    throw new InvalidOptionError(
      'unavailableRetryAfterMs',
      o.unavailableRetryAfterMs,
      'a whole number of milliseconds >= 0',
    );
  }
  if (typeof o.problemTypeBase !== 'string')
    throw new InvalidOptionError('problemTypeBase', o.problemTypeBase, 'a URI prefix string');
  if (typeof o.onError !== 'function')
    throw new InvalidOptionError('onError', o.onError, 'a function (error, request) => void');
  if (typeof o.unauthenticated !== 'function')
    throw new InvalidOptionError(
      'unauthenticated',
      o.unauthenticated,
      'a function (request) => 401 Response',
    );
  const validate = o.validate ?? acceptAnyBody<V>;
  if (typeof validate !== 'function')
    throw new InvalidOptionError(
      'validate',
      o.validate,
      'a function ({request, scope, body}) => {ok, value} | {ok: false, response}',
    );
  if (o.onKeyless !== undefined && typeof o.onKeyless !== 'function') {
    throw new InvalidOptionError(
      'onKeyless',
      o.onKeyless,
      'a function (request, admitted) => Response',
    );
  }
  warnIfUnscoped(scoped, o.onWarning);
  return {
    ...o,
    fingerprintOf,
    scopeOf,
    validate,
    onKeyless: o.onKeyless,
    methodSet: new Set(o.methods.map((m) => m.toUpperCase())),
    receiptHeaderSet: new Set(o.receiptHeaders.map((h) => h.toLowerCase())),
  };
}

function checkMethods(methods: readonly string[]): void {
  if (
    !Array.isArray(methods) ||
    methods.length === 0 ||
    !methods.every((m) => typeof m === 'string' && TOKEN.test(m))
  ) {
    throw new InvalidOptionError('methods', methods, 'a non-empty array of HTTP method names');
  }
  if (methods.some((m) => ['GET', 'HEAD', 'OPTIONS'].includes(m.toUpperCase()))) {
    throw new InvalidOptionError(
      'methods',
      methods,
      'methods that carry a body (not GET, HEAD, OPTIONS)',
    );
  }
}

function singleTenant(): string {
  return SINGLE_TENANT_SCOPE;
}

function acceptAnyBody<V>(): { ok: true; value: V } {
  return { ok: true, value: undefined as V };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
