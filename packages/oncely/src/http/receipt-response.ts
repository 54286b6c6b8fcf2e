import type { Receipt } from '../contract/receipt.js';
import { NULL_BODY_STATUSES } from '../contract/null-body-status.js';
import { knownResponseBody, responseOfBytes } from './known-body.js';

/** Headers that describe one connection or one transfer, never the answer itself. */
export const TRANSFER_HEADERS = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
]);

/** Headers as a Headers object iterates them: lower-case names, sorted, each Set-Cookie apart. */
export type HeaderPairs = ReadonlyArray<readonly [string, string]>;

/**
 * A handler's answer already held as bytes (a node route's captured writes): what a Response
 * would carry, without making one.
 */
export interface AnswerBytes {
  readonly status: number;
  readonly headers: HeaderPairs;
  readonly body: Uint8Array;
}

/** The receipt of a handler's Response, and every header it set (for the first answer in full). */
export async function answerToReceipt(
  answer: Response,
  allowList: ReadonlySet<string>,
): Promise<{ receipt: Receipt; headers: HeaderPairs }> {
  const body = knownResponseBody(answer) ?? new Uint8Array(await answer.arrayBuffer());
  return bytesToReceipt({ status: answer.status, headers: [...answer.headers], body }, allowList);
}

/** The receipt of an answer already held as bytes (a node route's capture): no await. */
export function bytesToReceipt(
  answer: AnswerBytes,
  allowList: ReadonlySet<string>,
): { receipt: Receipt; headers: HeaderPairs } {
  const { status, headers, body } = answer;
  const kept = headers.filter(([name]) => allowList.has(name));
  return { receipt: { status, headers: kept, body }, headers };
}

/** A Response from a stored receipt, with extra headers (Idempotent-Replayed) set on top. */
export function receiptToResponse(receipt: Receipt, extra: Record<string, string> = {}): Response {
  const headers = new Headers();
  for (const [name, value] of receipt.headers) headers.append(name, value);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return responseOfBytes(bodyFor(receipt.status, receipt.body), {
    status: receipt.status,
    headers,
  });
}

/** The first answer in full: every header the handler set, not only the allow-listed ones. */
export function firstResponse(status: number, original: HeaderPairs, body: Uint8Array): Response {
  const headers = new Headers();
  for (const [name, value] of original)
    if (!TRANSFER_HEADERS.has(name)) headers.append(name, value);
  return responseOfBytes(bodyFor(status, body), { status, headers });
}

/**
 * The Content-Length of an answer written from its bytes: the body's length, 0 for an empty one,
 * none where RFC 9110 forbids the field (1xx, 204) or where it would describe a representation
 * not sent (304). Without it, a response whose head is written first goes out chunked.
 */
export function contentLengthFor(status: number, bytes: Uint8Array | null): number | undefined {
  if (status < 200 || status === 204 || status === 304) return undefined;
  return bytes?.byteLength ?? 0;
}

/** The bytes a response with `status` carries: none for a status that must not have a body. */
export function bodyFor(status: number, body: Uint8Array): Uint8Array | null {
  return NULL_BODY_STATUSES.has(status) || body.byteLength === 0 ? null : body;
}
