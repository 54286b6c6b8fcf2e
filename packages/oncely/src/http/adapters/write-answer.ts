import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { HEADER } from '../../contract/headers.js';
import type { Receipt } from '../../contract/receipt.js';
import type { GuardAnswer } from '../idempotency-guard.js';
import { writeResponse } from '../node-listener.js';
import { bodyFor, contentLengthFor, TRANSFER_HEADERS } from '../receipt-response.js';

/**
 * Writes the guard's answer to a node response. A receipt (a replay, or the handler's first
 * answer) is written from its bytes: the same status, headers and body the web path's Response
 * would carry, without making one.
 */
export function writeAnswer(answer: GuardAnswer, res: ServerResponse): Promise<void> {
  if (answer instanceof Response) return writeResponse(answer, res);
  const { status, body } = answer.receipt;
  if (answer.kind === 'replayed') {
    const bytes = bodyFor(status, body);
    res.writeHead(status, replayHeaders(answer.receipt, bytes));
    res.end(bytes ?? undefined);
    return Promise.resolve();
  }
  const headers: OutgoingHttpHeaders = {};
  const cookies: string[] = [];
  for (const [name, value] of answer.headers)
    if (name === 'set-cookie') cookies.push(value);
    else if (!TRANSFER_HEADERS.has(name)) headers[name] = value;
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  const bytes = bodyFor(status, body);
  // The length is known: say it, as the route's own res.send did, rather than go out chunked.
  const length = contentLengthFor(status, bytes);
  if (length !== undefined) headers['content-length'] = length;
  res.writeHead(status, headers);
  res.end(bytes ?? undefined);
  return Promise.resolve();
}

/**
 * A replay's headers, made once per receipt and kept while the receipt is (the receipt cache
 * hands out the same object for every replay of a key): the stored ones, Idempotent-Replayed
 * and the length. node reads them without changing them.
 */
const replayHeadersOf = new WeakMap<Receipt, OutgoingHttpHeaders>();

function replayHeaders(receipt: Receipt, bytes: Uint8Array | null): OutgoingHttpHeaders {
  let headers = replayHeadersOf.get(receipt);
  if (headers !== undefined) return headers;
  headers = {};
  for (const [name, value] of receipt.headers) {
    const before = headers[name];
    headers[name] = before === undefined ? value : `${String(before)}, ${value}`;
  }
  headers[HEADER.idempotentReplayed.toLowerCase()] = 'true';
  const length = contentLengthFor(receipt.status, bytes);
  if (length !== undefined) headers['content-length'] = length;
  replayHeadersOf.set(receipt, headers);
  return headers;
}

/**
 * Writes a route's own first answer, captured from `res` and now committed, with the headers the
 * route set, still on `res`: nothing to copy, sort or set again. The length is the captured
 * body's (a route that wrote in chunks would otherwise go out chunked).
 */
export function writeOwnAnswer(receipt: Receipt, res: ServerResponse): void {
  const bytes = bodyFor(receipt.status, receipt.body);
  res.statusCode = receipt.status;
  if (res.hasHeader('transfer-encoding')) res.removeHeader('transfer-encoding');
  const length = contentLengthFor(receipt.status, bytes);
  if (length === undefined) res.removeHeader('content-length');
  else res.setHeader('content-length', length);
  res.end(bytes ?? undefined);
}
