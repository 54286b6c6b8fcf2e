import { describeError, HEADER, isRetryError, type Client, type LookupResult } from 'oncely';
import type { lostReplyFetch } from './lost-reply-fetch.js';
import { NOTES_STORY, type Caller, type NotesExchange, type NotesLookup } from './notes-story.js';

/** One request of the story through the client, as the lab prints it: a lost reply included. */
export function notesExchange(
  client: Client,
  wire: ReturnType<typeof lostReplyFetch>,
  path: string,
): (
  method: 'GET' | 'PATCH',
  caller: Caller | null,
  requestId: string | null,
  body?: unknown,
  maxAttempts?: number,
) => Promise<NotesExchange> {
  const S = NOTES_STORY;
  return async function exchange(
    method: 'GET' | 'PATCH',
    caller: Caller | null,
    requestId: string | null,
    body: unknown = null,
    maxAttempts?: number,
  ): Promise<NotesExchange> {
    const headers: Record<string, string> = {};
    if (caller) headers['authorization'] = `Bearer ${S.callers[caller]}`;
    if (body !== null) headers['content-type'] = 'application/json';
    const request = { method, path, caller, requestId, body };
    try {
      const { response, report } = await client.request(`${S.base}${path}`, {
        method,
        headers,
        ...(body === null ? {} : { body: JSON.stringify(body) }),
        ...(requestId === null ? {} : { idempotencyKey: requestId }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
      });
      return {
        request,
        response: await seen(response),
        lost: null,
        attempts: report.attemptCount,
      };
    } catch (error) {
      if (!isRetryError(error)) throw error;
      const { report, lastValue } = error;
      if (lastValue instanceof Response)
        return {
          request,
          response: await seen(lastValue),
          lost: null,
          attempts: report.attemptCount,
        };
      const reply = wire.lost.at(-1);
      if (!reply) throw error;
      const response = {
        status: reply.status,
        replayed: reply.headers.get(HEADER.idempotentReplayed) === 'true',
        retryAfter: reply.headers.get(HEADER.retryAfter),
        body: JSON.parse(reply.bodyText) as unknown,
      };
      const clientSaw = report.attempts.at(-1)?.detail ?? describeError(error.cause);
      return {
        request,
        response,
        lost: { clientSaw, outcome: report.outcome },
        attempts: report.attemptCount,
      };
    }
  };
}

/** What the status lookup told a caller, as the lab prints it. */
export function lookupOf(caller: Caller, requestId: string, found: LookupResult): NotesLookup {
  return {
    caller,
    requestId,
    kind: found.kind,
    receipt:
      found.kind === 'found'
        ? {
            status: found.receipt.status,
            body: JSON.parse(new TextDecoder().decode(found.receipt.body)) as unknown,
          }
        : null,
  };
}

/** A response as the lab prints it: status, replayed, Retry-After and the JSON body. */
async function seen(response: Response): Promise<NotesExchange['response']> {
  const text = await response.text();
  return {
    status: response.status,
    replayed: response.headers.get(HEADER.idempotentReplayed) === 'true',
    retryAfter: response.headers.get(HEADER.retryAfter),
    body: text === '' ? null : (JSON.parse(text) as unknown),
  };
}
