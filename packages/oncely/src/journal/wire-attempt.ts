import { observeError } from '../client/transport-error.js';
import { NULL_BODY_STATUSES } from '../contract/null-body-status.js';
import type { Clock } from '../time/clock.js';
import type { IntentRecord } from './intent.js';
import type { AttemptResult } from './next-step.js';
import { boundedResponse, rawHeaderPairs } from './attempt-response.js';
import { rawHeader, type WireAnswer, type WireRequest, type WireSend } from './wire-send.js';

/**
 * The attempt as a wire request, or undefined when the client's own path must take it: a target
 * that is not http or https (fetch says why it fails), or a deadline already passed (the client's
 * policy refuses the attempt). The limit is the client's: the attempt timeout, cut at the deadline.
 */
export function wireRequest(
  intent: IntentRecord,
  target: string,
  headers: Record<string, string>,
  clock: Clock,
): WireRequest | undefined {
  const url = parsedUrl(target);
  if (url === undefined) return undefined;
  const untilDeadline =
    intent.deadlineAt === null ? Number.POSITIVE_INFINITY : intent.deadlineAt - clock.now();
  if (untilDeadline <= 0) return undefined;
  const bodiless = intent.method === 'GET' || intent.method === 'HEAD';
  return {
    url,
    method: intent.method,
    headers,
    body: bodiless ? null : intent.body,
    limitMs: Math.max(1, Math.min(intent.policy.attemptTimeoutMs, untilDeadline)),
  };
}

/** Sends `request` and reads the answer as the client and sendAttempt would have read its Response. */
export async function sendOnWire(send: WireSend, request: WireRequest): Promise<AttemptResult> {
  let answer: WireAnswer;
  try {
    answer = await send(request);
  } catch (error) {
    return { observation: observeError(error), body: null };
  }
  return attemptOfAnswer(answer, request.method);
}

/**
 * An answer as the client and sendAttempt would have read its Response: the status classified by
 * the policy, Retry-After, Date and `webhook-delivery` honoured, the receipt and attempt log kept;
 * `durationMs` when the caller timed it.
 */
export function attemptOfAnswer(
  answer: WireAnswer,
  method: string,
  durationMs: number | null = null,
): AttemptResult {
  const { status, rawHeaders } = answer;
  // fetch refuses a status out of 200..599 as a network error.
  if (!(Number.isInteger(status) && status >= 200 && status <= 599)) {
    const refused = new TypeError('fetch failed', {
      cause: new Error(`invalid response status ${status}`),
    });
    return { observation: observeError(refused), body: null, durationMs };
  }
  const emptyBody = NULL_BODY_STATUSES.has(status) || method === 'HEAD';
  return {
    observation: {
      kind: 'response',
      status,
      retryAfter: rawHeader(rawHeaders, 'retry-after'),
      date: rawHeader(rawHeaders, 'date'),
    },
    // The client gives up on anything but a 2xx with budget one: then no body is kept.
    body: status >= 300 ? null : emptyBody ? new Uint8Array(0) : answer.body,
    hint: rawHeader(rawHeaders, 'webhook-delivery')?.trim().toLowerCase() ?? null,
    response: boundedResponse(
      rawHeaders.length === 0 ? NO_PAIRS : rawHeaderPairs(rawHeaders),
      answer.body,
    ),
    durationMs,
  };
}

/** An answer without headers (a `deliver` hook's, often): no generator made to read none. */
const NO_PAIRS: readonly (readonly [string, string])[] = Object.freeze([]);

const urls = new Map<string, URL>();
const MAX_URLS = 1000;

/** An http or https target as a URL, parsed once per distinct text; undefined for anything else. */
function parsedUrl(target: string): URL | undefined {
  let url = urls.get(target);
  if (url === undefined) {
    if (!URL.canParse(target)) return undefined;
    url = new URL(target);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (urls.size >= MAX_URLS) urls.clear();
    urls.set(target, url);
  }
  return url;
}
