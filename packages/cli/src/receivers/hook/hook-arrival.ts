import { formatHttpDate, HEADER, WEBHOOK_HEADER } from 'oncely';
import { problemResponse, type ConnectionControl } from 'oncely/http';
import type { HitAnswer, HookHit } from './hook-hit.js';
import type { RetryAfterFormat } from './hook-options.js';

/** What the receiver learnt about one arrival while the middleware and the effect ran. */
export interface Arrival {
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

/** The challenge of a 401 for a webhook signature (RFC 9110 section 11.6.1 wants one on every 401). */
export const WEBHOOK_CHALLENGE = 'Webhook-Signature realm="oncely"';

/**
 * Standard Webhooks names the delivery by `webhook-id`, the same on every attempt: the receiver
 * uses it as the idempotency key. A request carrying both headers must carry one value.
 */
export function keyedByWebhookId(request: Request): Request | Response {
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

export function hitOf(
  arrival: Arrival,
  answer: HitAnswer,
  status: number | null,
): Omit<HookHit, 'seq'> {
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
export function answerOf(response: Response): HitAnswer {
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
export function swallowed(connection: ConnectionControl | undefined): Response {
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
export function formatRetryAfter(seconds: number, nowMs: number, format: RetryAfterFormat): string {
  return format === 'seconds'
    ? String(seconds)
    : formatHttpDate(Math.floor(nowMs / 1000) * 1000 + seconds * 1000);
}
