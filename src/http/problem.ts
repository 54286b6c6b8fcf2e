import { HEADER, PROBLEM_JSON } from '../contract/headers.js';

/**
 * Every error the middleware answers, in one table: the single place where an outcome becomes an
 * HTTP status (DESIGN habit 8). Bodies are problem+json (RFC 9457) with type, title, status and
 * detail, plus `code` (the kind) for programs.
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
  // The services' own answers (seed 004's notes). version_conflict is a business answer, stored as
  // a receipt, and never carries Retry-After: a 409 with Retry-After means "in flight, come back".
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  version_conflict: { status: 409, title: 'The record changed since the expected version' },
  invalid_json: { status: 400, title: 'Request body is not valid JSON' },
  unsupported_media_type: { status: 415, title: 'Unsupported content type' },
  invalid_command: { status: 422, title: 'Request body has invalid fields' },
  // The server's own refusals (oncely serve): what node's HTTP parser could not read.
  malformed_request: { status: 400, title: 'Malformed HTTP request' },
  request_timeout: { status: 408, title: 'Request timeout' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  // The dropbox (seed 000). assignment_closed is a business answer, stored as a receipt: 403, not
  // 409 (retried when it carries Retry-After) or 422 (a reused key); a closed assignment is final.
  invalid_submission: { status: 422, title: 'Request body has invalid fields' },
  invalid_fault: { status: 400, title: 'Unknown fault' },
  assignment_closed: { status: 403, title: 'Assignment closed' },
  // The listings' query (`?limit=` of /dropbox/store and /ledger/receipts).
  invalid_query: { status: 400, title: 'Invalid query parameter' },
  // The status lookup by key (seed 004): seen and forgotten (410) is not never seen (404).
  never_seen: { status: 404, title: 'No request with this key was seen' },
  receipt_expired: { status: 410, title: 'Receipt expired' },
} as const;

export type ProblemKind = keyof typeof PROBLEMS;
export const PROBLEM_KINDS = Object.keys(PROBLEMS) as ProblemKind[];

/** The prefix of each problem's `type` URI; the kind follows it. @default 'urn:oncely:problem:' */
export const DEFAULT_PROBLEM_TYPE_BASE = 'urn:oncely:problem:';

export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ProblemKind;
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
}

export function problemDetails(kind: ProblemKind, detail: string, typeBase: string = DEFAULT_PROBLEM_TYPE_BASE): ProblemDetails {
  const { status, title } = PROBLEMS[kind];
  return { type: `${typeBase}${kind.replaceAll('_', '-')}`, title, status, detail, code: kind };
}

export function problemResponse(kind: ProblemKind, detail: string, options: ProblemOptions = {}): Response {
  const details = problemDetails(kind, detail, options.typeBase);
  // Standard members first and last: they lead the JSON, and an extension cannot overwrite them.
  const body = { ...details, ...options.extensions, ...details };
  const headers = new Headers({ [HEADER.contentType]: PROBLEM_JSON, 'cache-control': 'no-store' });
  if (options.retryAfterMs !== undefined) headers.set(HEADER.retryAfter, String(retryAfterSeconds(options.retryAfterMs)));
  return new Response(JSON.stringify(body), { status: details.status, headers });
}

/** Delay-seconds for a Retry-After header: never 0, which a client could read as "hammer now". */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
