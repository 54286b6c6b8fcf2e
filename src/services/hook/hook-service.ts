import { InvalidOptionError } from '../../contract/errors.js';
import { HEADER, PROBLEM_JSON } from '../../contract/headers.js';
import { keyProblem } from '../../contract/idempotency-key.js';
import { sha256Hex } from '../../contract/fingerprint.js';
import { formatHttpDate } from '../../contract/retry-after.js';
import { readBodyWithin } from '../../http/read-body.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { nextScriptAction, parseHookScript, SCRIPT_START, type HookScript, type ScriptCursor } from './hook-script.js';

/**
 * How the receiver answered one arrival.
 * - completed: the script said 2xx; the work was done and the ack sent.
 * - swallowed: the work was done, then the connection was dropped with no ack.
 * - replayed: a key that already completed came back with the same body: the stored ack, again.
 * - rejected: the script said no (429, 503, 400, ...).
 * - key_reused: a completed key came back with a different body (422).
 * - key_invalid: a malformed Idempotency-Key (400).
 * - too_large: a body over the limit (413).
 */
export const HIT_ANSWERS = ['completed', 'swallowed', 'replayed', 'rejected', 'key_reused', 'key_invalid', 'too_large'] as const;
export type HitAnswer = (typeof HIT_ANSWERS)[number];

/** One arrival, as the receiver saw it: seed 003's hit list, structured. */
export interface HookHit {
  /** Counts from 1 since the last reset. */
  readonly seq: number;
  /** When it arrived, from the receiver's clock. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly key: string | null;
  /**
   * SHA-256 of the body bytes: tells a retry of the same payload from a new payload. Null for a
   * body refused as too large: it was never read in full, so there is nothing to hash.
   */
  readonly bodySha256: string | null;
  readonly answer: HitAnswer;
  /** The status sent; null when the reply was swallowed. */
  readonly status: number | null;
  readonly retryAfter?: string;
}

export interface HookCounts {
  readonly arrivals: number;
  /** Arrivals that did the work: completed plus swallowed. A retry-safe client makes at most one. */
  readonly completions: number;
  readonly replays: number;
}

/** The one thing a web-standard handler cannot do itself: drop the connection without a reply. */
export interface ConnectionControl {
  drop(): void;
}

export const RETRY_AFTER_FORMATS = ['seconds', 'http-date'] as const;
export type RetryAfterFormat = (typeof RETRY_AFTER_FORMATS)[number];

export interface HookServiceOptions {
  /** A script string (see {@link parseHookScript}) or a parsed one. @default '200' */
  readonly script?: string | HookScript;
  /** Times the hits, the throttle window and the Date header. @default systemClock */
  readonly clock?: Clock;
  /** How Retry-After is written: delay-seconds, or an HTTP-date measured from this clock. @default 'seconds' */
  readonly retryAfterFormat?: RetryAfterFormat;
  /** Where the service is mounted, e.g. '/hooks': the debug routes live under it. @default '' */
  readonly basePath?: string;
  /** Largest body accepted, in bytes. @default 1048576 */
  readonly maxBodyBytes?: number;
  /** Called after each arrival is recorded: for a live log. */
  readonly onHit?: (hit: HookHit) => void;
}

export const DEFAULT_HOOK_OPTIONS = {
  script: '200',
  retryAfterFormat: 'seconds',
  basePath: '',
  maxBodyBytes: 1_048_576,
} as const satisfies HookServiceOptions;

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
  hits(): readonly HookHit[];
  counts(): HookCounts;
  /** Clears the hits, the idempotency map and the script position. */
  reset(): void;
}

interface StoredAck {
  readonly bodySha256: string;
  readonly status: number;
  readonly body: string;
}

export function createHookService(options: HookServiceOptions = {}): HookService {
  const script = typeof options.script === 'object' ? options.script : parseHookScript(options.script ?? DEFAULT_HOOK_OPTIONS.script);
  const clock = options.clock ?? systemClock;
  const retryAfterFormat = options.retryAfterFormat ?? DEFAULT_HOOK_OPTIONS.retryAfterFormat;
  if (!RETRY_AFTER_FORMATS.includes(retryAfterFormat)) {
    throw new InvalidOptionError('retryAfterFormat', retryAfterFormat, `one of ${RETRY_AFTER_FORMATS.join(', ')}`);
  }
  const basePath = (options.basePath ?? DEFAULT_HOOK_OPTIONS.basePath).replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) throw new InvalidOptionError('basePath', basePath, "'' or a path starting with /");
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_HOOK_OPTIONS.maxBodyBytes;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) throw new InvalidOptionError('maxBodyBytes', maxBodyBytes, 'an integer >= 0');

  const hitsPath = `${basePath}/debug/hits`;
  const resetPath = `${basePath}/debug/reset`;
  let hits: HookHit[] = [];
  let acks = new Map<string, StoredAck>();
  let cursor: ScriptCursor = SCRIPT_START;

  const counts = (): HookCounts => ({
    arrivals: hits.length,
    completions: hits.filter((h) => h.answer === 'completed' || h.answer === 'swallowed').length,
    replays: hits.filter((h) => h.answer === 'replayed').length,
  });
  const reset = (): void => {
    hits = [];
    acks = new Map();
    cursor = SCRIPT_START;
  };
  const headersNow = (contentType: string): Headers =>
    new Headers({ [HEADER.date]: formatHttpDate(clock.now()), [HEADER.contentType]: contentType });
  const json = (status: number, body: unknown): Response =>
    new Response(JSON.stringify(body), { status, headers: headersNow('application/json') });
  const problem = (status: number, title: string, detail: string, extra: Record<string, string> = {}, members: Record<string, unknown> = {}): Response => {
    const headers = headersNow(PROBLEM_JSON);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return new Response(JSON.stringify({ type: 'about:blank', title, status, detail, ...members }), { status, headers });
  };

  async function arrival(request: Request, path: string, connection: ConnectionControl | undefined): Promise<Response> {
    const at = clock.now();
    const key = request.headers.get(HEADER.idempotencyKey);
    // The limit holds while reading (a declared Content-Length over it is refused unread, a
    // streamed body is cut at the first chunk past it): a hostile sender cannot make the
    // receiver buffer gigabytes only to be told 413 afterwards.
    const read = await readBodyWithin(request, maxBodyBytes);
    /** Records the arrival (numbered when it is answered, so hits stay in order) and returns its number. */
    const record = (bodySha256: string | null, answer: HitAnswer, status: number | null, retryAfter?: string): number => {
      const base = { seq: hits.length + 1, at, method: request.method, path, key, bodySha256, answer, status };
      const hit: HookHit = retryAfter === undefined ? base : { ...base, retryAfter };
      hits.push(hit);
      options.onHit?.(hit);
      return hit.seq;
    };
    if (read.kind === 'too_large') {
      record(null, 'too_large', 413);
      return problem(413, 'Content Too Large', `the body exceeds ${read.limitBytes} bytes, the most this receiver accepts`, {}, { maxBodyBytes: read.limitBytes });
    }
    const bodySha256 = sha256Hex(read.bytes);
    if (key !== null) {
      const why = keyProblem(key);
      if (why !== undefined) {
        record(bodySha256, 'key_invalid', 400);
        return problem(400, 'Bad Request', why);
      }
      const ack = acks.get(key);
      if (ack) {
        // DESIGN wire contract: a different payload under a used key is refused (422) before
        // anything else; the same payload is answered from the stored ack, not done twice.
        if (ack.bodySha256 !== bodySha256) {
          record(bodySha256, 'key_reused', 422);
          return problem(422, 'Unprocessable Content', 'this idempotency key was already used with a different body');
        }
        record(bodySha256, 'replayed', ack.status);
        const headers = headersNow('application/json');
        headers.set(HEADER.idempotentReplayed, 'true');
        return new Response(ack.body, { status: ack.status, headers });
      }
    }

    const [action, next] = nextScriptAction(script, cursor, at);
    cursor = next;
    const completion = counts().completions + 1;
    if (action.kind === 'swallow') {
      if (key !== null) acks.set(key, { bodySha256, status: 200, body: ackBody(completion) });
      record(bodySha256, 'swallowed', null);
      if (connection) {
        connection.drop();
        return new Response(null, { status: 204 });
      }
      // No socket to drop (mounted behind an adapter that gives none): break the reply mid-body,
      // which a client reads as a transport failure, the same unknown outcome.
      return new Response(new ReadableStream({ start: (c) => c.error(new Error('hook: ack swallowed')) }), {
        status: 200,
        headers: headersNow('application/json'),
      });
    }
    const { status } = action;
    if (status >= 200 && status < 300) {
      const body = ackBody(completion);
      if (key !== null) acks.set(key, { bodySha256, status, body });
      record(bodySha256, 'completed', status);
      return new Response(status === 204 || status === 205 ? null : body, { status, headers: headersNow('application/json') });
    }
    const retryAfter = action.retryAfterSeconds === undefined ? undefined : formatRetryAfter(action.retryAfterSeconds, at, retryAfterFormat);
    const seq = record(bodySha256, 'rejected', status, retryAfter);
    return problem(status, 'Scripted refusal', `hook script ${script.text} answers ${status} to hit ${seq}`, retryAfter === undefined ? {} : { [HEADER.retryAfter]: retryAfter });
  }

  async function handle(request: Request, connection?: ConnectionControl): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === hitsPath) {
      if (request.method === 'GET' || request.method === 'HEAD') return json(200, { script: script.text, ...counts(), hits });
      if (request.method === 'DELETE') return resetResponse();
      return problem(405, 'Method Not Allowed', `${hitsPath} answers GET and DELETE`, { allow: 'GET, HEAD, DELETE' });
    }
    if (path === resetPath) {
      if (request.method === 'POST') return resetResponse();
      return problem(405, 'Method Not Allowed', `${resetPath} answers POST`, { allow: 'POST' });
    }
    return arrival(request, path, connection);
  }

  function resetResponse(): Response {
    reset();
    return new Response(null, { status: 204, headers: { [HEADER.date]: formatHttpDate(clock.now()) } });
  }

  return {
    handle,
    script,
    routes: [
      { method: 'GET', path: hitsPath, description: 'the hits, counts and script as JSON' },
      { method: 'POST', path: resetPath, description: 'clear hits, idempotency map and script position' },
      { method: 'DELETE', path: hitsPath, description: 'same as POST /debug/reset' },
      { method: '*', path: `${basePath}/*`, description: 'any other request: recorded, then answered by the script' },
    ],
    hits: () => [...hits],
    counts,
    reset,
  };
}

function ackBody(completion: number): string {
  return JSON.stringify({ received: true, completion });
}

/**
 * Retry-After in either form of RFC 9110 section 10.2.3. A date is counted from the same whole
 * second the Date header shows, so a client that measures it against Date gets exactly `seconds`.
 */
function formatRetryAfter(seconds: number, nowMs: number, format: RetryAfterFormat): string {
  return format === 'seconds' ? String(seconds) : formatHttpDate(Math.floor(nowMs / 1000) * 1000 + seconds * 1000);
}
