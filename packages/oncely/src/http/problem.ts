import { HEADER, PROBLEM_JSON } from '../contract/headers.js';
import { responseOfBytes } from './known-body.js';

/**
 * One kind of problem: its machine-readable code, its status and its title. The http layer owns
 * the kinds every receiver shares ({@link PROBLEMS}); a service declares its own business answers
 * beside its code (the dropbox's `assignment_closed`, the notes' `version_conflict`) as values of
 * this type and hands them to the same builder, {@link problemResponse}.
 */
export interface ProblemType<Code extends string = string> {
  readonly code: Code;
  readonly status: number;
  readonly title: string;
}

/**
 * The problems of the receiver's wire contract and of the HTTP edge: the single place where a
 * shared outcome becomes an HTTP status (docs/design.md, habit 8). Bodies are problem+json (RFC 9457) with
 * type, title, status and detail, plus `code` (the kind) for programs.
 */
export const PROBLEMS = {
  unauthenticated: { status: 401, title: 'Authentication required' },
  missing_key: { status: 400, title: 'Idempotency-Key header missing' },
  invalid_key: { status: 400, title: 'Idempotency-Key header malformed' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  key_reused: { status: 422, title: 'Idempotency-Key reused with a different payload' },
  in_flight: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  ledger_unavailable: { status: 503, title: 'Idempotency ledger unavailable' },
  internal_error: { status: 500, title: 'Internal error' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  invalid_json: { status: 400, title: 'Request body is not valid JSON' },
  unsupported_media_type: { status: 415, title: 'Unsupported content type' },
  // What node's HTTP parser could not read (the server's own refusals).
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  request_timeout: { status: 408, title: 'Request timeout' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  shutting_down: { status: 503, title: 'Server shutting down' },
} as const satisfies Record<string, Omit<ProblemType, 'code'>>;

export type ProblemKind = keyof typeof PROBLEMS;

/** A service's own problem kind, declared where the service lives. */
export function defineProblem<Code extends string>(
  code: Code,
  status: number,
  title: string,
): ProblemType<Code> {
  return { code, status, title };
}

/**
 * The prefix of each shared problem's `type` URI; the kind follows it, `_` written `-`. A link
 * to the section of docs/ledger.md that explains the kind: RFC 9457 section 3.1.1 asks a type URI
 * that is dereferenced to give human-readable documentation, and the IETF Idempotency-Key draft
 * (section 2.7) answers its errors with a link to the relevant documentation. The one place the
 * docs' address is written; a test holds every kind of {@link PROBLEMS} to a heading there.
 */
export const DEFAULT_PROBLEM_TYPE_BASE =
  'https://github.com/oncely/oncely/blob/main/docs/ledger.md#problem-';

/**
 * The prefix of the `type` of a service's own kind ({@link defineProblem}) when no base is
 * given: a name, not a page, since docs/ledger.md does not describe a service's business answers.
 */
export const SERVICE_PROBLEM_TYPE_BASE = 'urn:oncely:problem:';

export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
}

export interface ProblemOptions {
  /** Sent as Retry-After, in whole seconds rounded up (at least 1): RFC 9110 section 10.2.3. */
  readonly retryAfterMs?: number | undefined;
  readonly typeBase?: string | undefined;
  /**
   * Extension members (RFC 9457 section 3.2), e.g. `{ currentVersion: 3 }`. They never replace
   * the standard members.
   */
  readonly extensions?: Readonly<Record<string, unknown>> | undefined;
  /** Extra response headers (`allow`, `www-authenticate`, `accept-post`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

function problemTypeOf(kind: ProblemKind | ProblemType): ProblemType {
  return typeof kind === 'string' ? { code: kind, ...PROBLEMS[kind] } : kind;
}

/**
 * The body's members. Without a `typeBase`, a kind of {@link PROBLEMS} links to its section of
 * the docs, and a service's own kind is named by a URN.
 */
export function problemDetails(
  kind: ProblemKind | ProblemType,
  detail: string,
  typeBase?: string,
): ProblemDetails {
  const { code, status, title } = problemTypeOf(kind);
  const base =
    typeBase ??
    (Object.hasOwn(PROBLEMS, code) ? DEFAULT_PROBLEM_TYPE_BASE : SERVICE_PROBLEM_TYPE_BASE);
  return { type: `${base}${code.replaceAll('_', '-')}`, title, status, detail, code };
}

/** A type URI a client can open: an http(s) link, which the Link header repeats. */
const LINKABLE = /^https?:\/\//i;

const encoder = new TextEncoder();

/** The one problem+json builder: every refusal of every service goes through it. */
export function problemResponse(
  kind: ProblemKind | ProblemType,
  detail: string,
  options: ProblemOptions = {},
): Response {
  const details = problemDetails(kind, detail, options.typeBase);
  // Standard members first and last: they lead the JSON, and an extension cannot overwrite them.
  const body = { ...details, ...options.extensions, ...details };
  const headers = new Headers({ [HEADER.contentType]: PROBLEM_JSON, 'cache-control': 'no-store' });
  // The draft's alternative to the body's link (section 2.7): `Link: <...>; rel="describedby"`
  // (RFC 8288), for a client that reads headers and not problem+json.
  if (LINKABLE.test(details.type)) headers.set('link', `<${details.type}>; rel="describedby"`);
  if (options.retryAfterMs !== undefined)
    headers.set(HEADER.retryAfter, String(retryAfterSeconds(options.retryAfterMs)));
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  return responseOfBytes(encoder.encode(JSON.stringify(body)), { status: details.status, headers });
}

/** Delay-seconds for a Retry-After header: never 0, which a client could read as "hammer now". */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
