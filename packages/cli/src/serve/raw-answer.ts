import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_JSON } from 'oncely';
import { problemDetails, type ProblemKind } from 'oncely/http';
import type { RequestGate } from './request-gate.js';

/** The methods the server's routes answer: the adapters' own list (a 405 names them). */
const SERVED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/** Node's codes for a request that took too long: the request timeout and the headers timeout. */
const TIMEOUT_CODES = new Set(['ERR_HTTP_REQUEST_TIMEOUT', 'ERR_HTTP_HEADERS_TIMEOUT']);

/**
 * A request node's parser refused or gave up on (a bad request line, headers too large, too
 * slow): answered in problem+json like every other refusal, instead of node's bare status line.
 * A request a handler already has (its body was still arriving when the request timeout struck)
 * is answered through its response, and its Request aborted so nothing it did commits; node's
 * own rule holds: nothing is written once an answer has begun.
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  gate: RequestGate,
): void {
  const code = error.code ?? '';
  if (code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const kind: ProblemKind =
    code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : TIMEOUT_CODES.has(code)
        ? 'request_timeout'
        : 'malformed_request';
  const detail =
    kind === 'request_timeout'
      ? "the request did not arrive in time; send the whole request within the server's request timeout"
      : `the server could not read the request (${code || 'parse error'})`;
  const res = gate.responseOn(socket as import('node:net').Socket);
  if (res !== undefined) {
    if (!gate.answerInstead(res, kind, detail)) socket.destroy();
    return;
  }
  writeRaw(socket, kind, detail);
}

/**
 * CONNECT asks for a tunnel (RFC 9110 section 9.3.6), which node hands to a `connect` listener
 * instead of the request handler; without one, it closes the connection with no answer. Answered
 * 405 problem+json, naming the methods the server's routes are reached with.
 */
export function refuseConnect(req: IncomingMessage, socket: Duplex): void {
  writeRaw(
    socket,
    'method_not_allowed',
    `${req.method ?? 'CONNECT'} is not served here: no route opens a tunnel`,
    { allow: SERVED_METHODS },
  );
}

function writeRaw(
  socket: Duplex,
  kind: ProblemKind,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const details = problemDetails(kind, detail);
  const body = JSON.stringify(details);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${details.status} ${STATUS_CODES[details.status] ?? ''}\r\ncontent-type: ${PROBLEM_JSON}\r\ncache-control: no-store\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
