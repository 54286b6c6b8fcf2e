import { Hono, type MiddlewareHandler } from 'hono';
import { HEADER } from 'oncely';
import {
  methodNotAllowedResponse,
  unauthenticatedResponse,
  type ConnectionControl,
  problemResponse,
  type Validate,
} from 'oncely/http';
import { idempotency, type RouteIdempotency } from 'oncely/hono';
import { readRowLimit, rowPage } from '../sql/row-limit.js';
import {
  FAULT_HEADER,
  FAULT_HEADER_VALUES,
  resolveDropboxDeps,
  type DropboxAppDeps,
  type DropboxFault,
} from './dropbox-options.js';
import { DROPBOX_PROBLEMS } from './dropbox-problems.js';
import { statusLookup } from './dropbox-lookup.js';
import { insertSubmission, listSubmissionsPage } from './dropbox-table.js';
import { submissionFingerprint, submissionValidator, type Submission } from './submission.js';

type DropboxEnv<Tx> = {
  Bindings: { connection?: ConnectionControl | undefined };
  Variables: {
    idempotency: RouteIdempotency<Tx, Submission> | undefined;
    caller: string;
    accepted: boolean;
  };
};

/** The fault a request asks for: the app's, unless its Oncely-Fault header names another (or none). */
type FaultRead =
  | { readonly ok: true; readonly fault: DropboxFault | undefined }
  | { readonly ok: false; readonly response: Response };

function readFault(request: Request, appFault: DropboxFault | undefined): FaultRead {
  const header = request.headers.get(FAULT_HEADER);
  if (header === null) return { ok: true, fault: appFault };
  const value = header.trim().toLowerCase();
  if (!(FAULT_HEADER_VALUES as readonly string[]).includes(value)) {
    const detail = `${FAULT_HEADER} must be one of ${FAULT_HEADER_VALUES.join(', ')}, not ${JSON.stringify(header)}`;
    return { ok: false, response: problemResponse(DROPBOX_PROBLEMS.invalid_fault, detail) };
  }
  return { ok: true, fault: value === 'none' ? undefined : (value as DropboxFault) };
}

/** Methods each route answers; anything else is a 405 naming them. */
const ALLOWED = { submissions: 'POST', submission: 'GET, HEAD', store: 'GET, HEAD' } as const;

/**
 * The dropbox story's course dropbox as a service (docs/origins.md), a Hono app with routes relative to its mount point:
 * - `POST /submissions` `{student, assignment}` with a bearer token and an Idempotency-Key: the
 *   row is written inside the ledger's transaction and commits with the receipt. 201
 *   `{key, student, assignment, status: 'accepted', writes}`. After the assignment's close time:
 *   403 `assignment_closed`, a business answer stored like the 201 (403, not 409 or 422: a
 *   client retries a 409 that carries Retry-After, and 422 is a reused key; "closed" is final).
 *   An exact retry of a submission accepted before the close replays its 201: the ledger answers
 *   before the close is checked. A malformed body is refused (400/413/415/422) before the ledger,
 *   by the middleware's `validate` step, which parses it once; the handler gets the checked value.
 * - `GET /submissions/:key`: the read-only status lookup (the dropbox story's extension (docs/origins.md): allowed after
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
  const {
    ledger,
    db,
    scopeOf,
    clock,
    closesAtOf,
    fault: appFault,
    limits,
    onError,
  } = resolveDropboxDeps(deps);
  const checkSubmission = submissionValidator(limits);
  // The service's own step of the middleware: the fault header, then the body (400, 415, 422).
  const validate: Validate<Submission> = (input) => {
    const fault = readFault(input.request, appFault);
    return fault.ok ? checkSubmission(input) : fault;
  };
  const guard = idempotency<Tx, Submission>({
    ledger,
    scopeOf: (c) => scopeOf(c.req.raw),
    methods: ['POST'],
    maxBodyBytes: limits.maxBodyBytes,
    validate,
    fingerprintOf: submissionFingerprint,
    unauthenticated: () => unauthenticatedResponse(),
    onError,
  });

  const requireCaller = callerRequired<Tx>(scopeOf);
  const swallowAck = ackSwallower<Tx>(appFault);

  const app = new Hono<DropboxEnv<Tx>>();

  app.post('/submissions', swallowAck, guard, async (c) => {
    const context = c.get('idempotency');
    // Unreachable: POST always goes through the ledger. A 500 rolls back.
    if (context === undefined)
      return problemResponse('internal_error', 'the submission reached the handler unchecked');
    const submission = context.value;
    const nowMs = clock.now();
    const closesAt = closesAtOf(submission.assignment);
    if (closesAt !== undefined && nowMs >= closesAt)
      return assignmentClosed(submission.assignment, closesAt);
    const row = await insertSubmission(
      db.within(context.tx),
      context.scope,
      context.key,
      submission,
      nowMs,
    );
    c.set('accepted', true);
    return c.json(row, 201, {
      location: `${new URL(c.req.url).pathname}/${encodeURIComponent(context.key)}`,
      'cache-control': 'no-store',
    });
  });

  app.get('/submissions/:key', requireCaller, (c) =>
    statusLookup(ledger, onError, c.get('caller'), c.req.param('key'), c.req.raw),
  );

  app.get('/store', requireCaller, async (c) => {
    const caller = c.get('caller');
    const asked = readRowLimit(new URL(c.req.url));
    if (asked.kind === 'refused') return asked.response;
    // Outside any request's transaction, through the store: never interleaved on one SQLite connection.
    const { rows, total } = await db.transaction((sql) =>
      listSubmissionsPage(sql, caller, asked.limit),
    );
    return c.json({ caller, ...rowPage(total, asked.limit, rows.length), rows }, 200, {
      'cache-control': 'no-store',
    });
  });

  for (const [path, allowed] of [
    ['/submissions', ALLOWED.submissions],
    ['/submissions/:key', ALLOWED.submission],
    ['/store', ALLOWED.store],
  ] as const) {
    app.all(path, () => methodNotAllowedResponse(allowed));
  }

  app.onError((error, c) => {
    onError(error, c.req.raw);
    return problemResponse(
      'internal_error',
      'the request failed and was rolled back; it may be retried with the same key',
    );
  });

  return app as unknown as Hono;
}

/** GET routes: the caller, or 401 (POST resolves it in the middleware, once). */
function callerRequired<Tx>(
  scopeOf: (request: Request) => string | undefined,
): MiddlewareHandler<DropboxEnv<Tx>> {
  return async (c, next) => {
    const caller = scopeOf(c.req.raw);
    if (caller === undefined || caller === '') return unauthenticatedResponse();
    c.set('caller', caller);
    return next();
  };
}

/** Swallows the ack of a fresh acceptance when the request (or the app) asks for it. */
function ackSwallower<Tx>(appFault: DropboxFault | undefined): MiddlewareHandler<DropboxEnv<Tx>> {
  return async (c, next) => {
    await next();
    const fault = readFault(c.req.raw, appFault);
    // Only an acceptance that just committed: a replay, a refusal or a problem is answered.
    if (
      !fault.ok ||
      fault.fault !== 'swallow-first-ack' ||
      c.get('accepted') !== true ||
      c.res.status !== 201 ||
      c.res.headers.has(HEADER.idempotentReplayed)
    )
      return;
    const connection = c.env?.connection;
    c.res = undefined as unknown as Response; // replace, do not merge headers (see oncely/hono's idempotency())
    if (connection) {
      connection.drop();
      c.res = new Response(null, { status: 204 });
    } else {
      c.res = new Response(
        new ReadableStream({
          start: (controller) => controller.error(new Error('dropbox: ack swallowed')),
        }),
        {
          status: 201,
          headers: { [HEADER.contentType]: 'application/json' },
        },
      );
    }
  };
}

/** The 403 of a new submission after its assignment closed (final: a client does not retry it). */
function assignmentClosed(assignment: string, closesAt: number): Response {
  return problemResponse(
    DROPBOX_PROBLEMS.assignment_closed,
    `${assignment} closed at ${new Date(closesAt).toISOString()}: new submissions are refused (a retry of a submission accepted before the close still gets its receipt)`,
    { extensions: { assignment, closesAt: new Date(closesAt).toISOString() } },
  );
}
