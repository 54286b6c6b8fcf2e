import { Hono, type MiddlewareHandler } from 'hono';
import { HEADER } from '../../contract/headers.js';
import { keyProblem } from '../../contract/idempotency-key.js';
import { honoIdempotency, type IdempotencyVariables } from '../../http/hono-middleware.js';
import { createIdempotencyMiddleware } from '../../http/idempotency-middleware.js';
import type { ConnectionControl } from '../../http/node-listener.js';
import { problemResponse } from '../../http/problem.js';
import type { LookupResult } from '../../ledger/ledger-result.js';
import { readRowLimit, rowPage } from '../sql/row-limit.js';
import { FAULT_HEADER, FAULT_HEADER_VALUES, resolveDropboxDeps, type DropboxAppDeps, type DropboxFault } from './dropbox-options.js';
import { insertSubmission, listSubmissionsPage } from './dropbox-table.js';
import { readSubmission, submissionFingerprint, type Submission } from './submission.js';

type DropboxEnv<Tx> = {
  Bindings: { connection?: ConnectionControl | undefined };
  Variables: IdempotencyVariables<Tx> & { caller: string; submission: Submission; accepted: boolean };
};

/** Methods each route answers; anything else is a 405 naming them. */
const ALLOWED = { submissions: 'POST', submission: 'GET, HEAD', store: 'GET, HEAD' } as const;

/**
 * Seed 000's course dropbox as a service, a Hono app with routes relative to its mount point:
 * - `POST /submissions` `{student, assignment}` with a bearer token and an Idempotency-Key: the
 *   row is written inside the ledger's transaction and commits with the receipt. 201
 *   `{key, student, assignment, status: 'accepted', writes}`. After the assignment's close time:
 *   403 `assignment_closed`, a business answer stored like the 201 (403, not 409 or 422: a
 *   client retries a 409 that carries Retry-After, and 422 is a reused key; "closed" is final).
 *   An exact retry of a submission accepted before the close replays its 201: the ledger answers
 *   before the close is checked. A malformed body is refused (400/413/415/422) before the ledger.
 * - `GET /submissions/:key`: the read-only status lookup (seed 000's extension: allowed after
 *   the deadline), from the ledger: 200 found or in flight, 410 expired, 404 never seen.
 * - `GET /store[?limit=N]`: the caller's newest N rows (default 100, at most 1000; 400 otherwise),
 *   oldest first: key, student, assignment, status, writes; with `total`, `limit`, `truncated`.
 *
 * Fault `swallow-first-ack` (per app, or per request with `Oncely-Fault: swallow-first-ack`):
 * the row and the receipt commit, then the connection is dropped without a reply. The adapter
 * must pass a {@link ConnectionControl} as `env.connection` (`app.fetch(request, { connection })`);
 * without one the reply breaks mid-body, which a client reads as the same lost ack.
 */
export function createDropboxApp<Tx>(deps: DropboxAppDeps<Tx>): Hono {
  const { ledger, db, scopeOf, clock, closesAtOf, fault, limits, onError } = resolveDropboxDeps(deps);
  const idempotency = createIdempotencyMiddleware<Tx>({
    ledger,
    scopeOf,
    methods: ['POST'],
    maxBodyBytes: limits.maxBodyBytes,
    fingerprintOf: submissionFingerprint,
    onError,
  });

  const requireCaller: MiddlewareHandler<DropboxEnv<Tx>> = async (c, next) => {
    const caller = scopeOf(c.req.raw);
    if (caller === undefined || caller === '') return unauthenticated();
    c.set('caller', caller);
    await next();
  };

  /** Reads Oncely-Fault (or the app's fault), and swallows the ack of a fresh acceptance. */
  const injectFault: MiddlewareHandler<DropboxEnv<Tx>> = async (c, next) => {
    const header = c.req.header(FAULT_HEADER);
    let active: DropboxFault | undefined = fault;
    if (header !== undefined) {
      const value = header.trim().toLowerCase();
      if (!(FAULT_HEADER_VALUES as readonly string[]).includes(value)) {
        return problemResponse('invalid_fault', `${FAULT_HEADER} must be one of ${FAULT_HEADER_VALUES.join(', ')}, not ${JSON.stringify(header)}`);
      }
      active = value === 'none' ? undefined : (value as DropboxFault);
    }
    await next();
    // Only an acceptance that just committed: a replay, a refusal or a problem is answered.
    if (active !== 'swallow-first-ack' || c.get('accepted') !== true || c.res.status !== 201 || c.res.headers.has(HEADER.idempotentReplayed)) return;
    const connection = c.env?.connection;
    c.res = undefined as unknown as Response; // replace, do not merge headers (see honoIdempotency)
    if (connection) {
      connection.drop();
      c.res = new Response(null, { status: 204 });
    } else {
      c.res = new Response(new ReadableStream({ start: (controller) => controller.error(new Error('dropbox: ack swallowed')) }), {
        status: 201,
        headers: { [HEADER.contentType]: 'application/json' },
      });
    }
  };

  /** Judges the body before the ledger does anything; passes on an identical copy to fingerprint. */
  const checkSubmission: MiddlewareHandler<DropboxEnv<Tx>> = async (c, next) => {
    const request = c.req.raw;
    const read = await readSubmission(request, limits);
    if (read.kind === 'refused') return read.response;
    c.req.raw = new Request(request.url, { method: request.method, headers: request.headers, body: new Uint8Array(read.bytes), signal: request.signal });
    c.set('submission', read.submission);
    await next();
  };

  const app = new Hono<DropboxEnv<Tx>>();

  app.post('/submissions', requireCaller, injectFault, checkSubmission, honoIdempotency(idempotency), async (c) => {
    const context = c.get('idempotency');
    // Unreachable: POST always goes through the ledger, after checkSubmission. A 500 rolls back.
    if (context === undefined) return problemResponse('internal_error', 'the submission reached the handler unchecked');
    const submission = c.get('submission');
    const nowMs = clock.now();
    const closesAt = closesAtOf(submission.assignment);
    if (closesAt !== undefined && nowMs >= closesAt) {
      return problemResponse(
        'assignment_closed',
        `${submission.assignment} closed at ${new Date(closesAt).toISOString()}: new submissions are refused (a retry of a submission accepted before the close still gets its receipt)`,
        { extensions: { assignment: submission.assignment, closesAt: new Date(closesAt).toISOString() } },
      );
    }
    const row = await insertSubmission(db.within(context.tx), context.scope, context.key, submission, nowMs);
    c.set('accepted', true);
    return c.json(row, 201, { location: `${new URL(c.req.url).pathname}/${encodeURIComponent(context.key)}`, 'cache-control': 'no-store' });
  });

  app.get('/submissions/:key', requireCaller, async (c) => {
    const key = c.req.param('key');
    const malformed = keyProblem(key);
    if (malformed !== undefined) return problemResponse('invalid_key', malformed);
    const result = await ledger.lookup(c.get('caller'), key);
    if (result.kind === 'unavailable') {
      onError(result.cause, c.req.raw);
      return problemResponse('ledger_unavailable', 'the idempotency ledger cannot be reached', { retryAfterMs: 1000 });
    }
    return lookupResponse(key, result);
  });

  app.get('/store', requireCaller, async (c) => {
    const caller = c.get('caller');
    const asked = readRowLimit(new URL(c.req.url));
    if (asked.kind === 'refused') return asked.response;
    // Outside any request's transaction, through the store: never interleaved on one SQLite connection.
    const { rows, total } = await db.transaction((sql) => listSubmissionsPage(sql, caller, asked.limit));
    return c.json({ caller, ...rowPage(total, asked.limit, rows.length), rows }, 200, { 'cache-control': 'no-store' });
  });

  for (const [path, allowed] of [['/submissions', ALLOWED.submissions], ['/submissions/:key', ALLOWED.submission], ['/store', ALLOWED.store]] as const) {
    app.all(path, () => methodNotAllowed(allowed));
  }

  app.onError((error, c) => {
    onError(error, c.req.raw);
    return problemResponse('internal_error', 'the request failed and was rolled back; it may be retried with the same key');
  });

  return app as unknown as Hono;
}

/** The status lookup as HTTP: the ledger's answer, with instants as RFC 3339 text. */
function lookupResponse(key: string, result: Exclude<LookupResult, { kind: 'unavailable' }>): Response {
  const iso = (ms: number): string => new Date(ms).toISOString();
  const headers = { 'cache-control': 'no-store' };
  switch (result.kind) {
    case 'found':
      return Response.json(
        {
          key,
          lookup: 'found',
          status: result.receipt.status,
          receipt: receiptBody(result.receipt.body),
          firstSeenAt: iso(result.firstSeenAt),
          completedAt: iso(result.completedAt),
          expiresAt: iso(result.expiresAt),
        },
        { headers },
      );
    case 'in_flight':
      return Response.json(
        { key, lookup: 'in_flight', firstSeenAt: iso(result.firstSeenAt), leaseExpiresAt: iso(result.leaseExpiresAt), leaseExpired: result.leaseExpired },
        { headers },
      );
    case 'expired':
      // Seen, and its receipt is gone: resending may repeat it (seed 004's "expired" is not "never seen").
      return problemResponse('receipt_expired', `the receipt of ${key} expired at ${iso(result.expiredAt)}; resending it may repeat it`, {
        extensions: { key, lookup: 'expired', firstSeenAt: iso(result.firstSeenAt), expiredAt: iso(result.expiredAt) },
      });
    case 'never_seen':
      return problemResponse('never_seen', `no submission with key ${JSON.stringify(key)} was seen from this caller`, { extensions: { key, lookup: 'never_seen' } });
  }
}

function receiptBody(body: Uint8Array): unknown {
  const text = new TextDecoder().decode(body);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function unauthenticated(): Response {
  const response = problemResponse('unauthenticated', 'send Authorization: Bearer <token>; oncely serve prints a dev token at start');
  response.headers.set('www-authenticate', 'Bearer realm="oncely"');
  return response;
}

function methodNotAllowed(allowed: string): Response {
  const response = problemResponse('method_not_allowed', `this route answers ${allowed}`);
  response.headers.set('allow', allowed);
  return response;
}
