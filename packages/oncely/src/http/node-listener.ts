import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { OncelyError } from '../contract/errors.js';
import { knownResponseBody } from './known-body.js';
import { logOncelyError } from './log-oncely-error.js';
import { NodeRequest } from './node-request.js';
import { problemResponse } from './problem.js';
import { readRequestTarget } from './request-target.js';

/**
 * The one thing a web-standard handler cannot do itself: drop the connection without a reply
 * (a swallowed ack, the dropbox story (docs/origins.md)). Given by the node adapters; after `drop()` the response is ignored.
 */
export interface ConnectionControl {
  drop(): void;
}

/** A web-standard handler: what the middleware and the adapters pass around. */
export type FetchHandler = (
  request: Request,
  connection?: ConnectionControl,
) => Response | Promise<Response>;

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** Told about errors the handler threw (the client gets a 500 problem). @default logOncelyError (stderr) */
  readonly onError?: (error: unknown) => void;
  /**
   * Told about requests refused before any handler saw them (a bad Host, a target that is not a
   * URL, TRACE): the method and target as sent, and the answer. @default nothing
   */
  readonly onRefused?: (refusal: {
    readonly method: string;
    readonly target: string;
    readonly status: number;
  }) => void;
}

/** The abort controller of each request a handler is producing an answer for. */
const aborters = new WeakMap<ServerResponse, AbortController>();

/**
 * Aborts the Request behind `res` while its handler still runs, as when the client goes away:
 * the idempotency middleware then rolls the request's transaction back instead of committing an
 * answer nobody will receive. The server calls it before answering for the handler itself (a
 * 408 past the request timeout, a 503 at the end of a shutdown's grace).
 */
export function abortNodeRequest(
  res: ServerResponse,
  answer: { readonly status: number; readonly code: string; readonly detail: string },
): void {
  aborters.get(res)?.abort(new AnsweredInstead(answer.status, answer.code, answer.detail));
}

/** The abort reason of a Request the server answered itself, with the status it sent. */
export class AnsweredInstead extends OncelyError {
  readonly status: number;

  constructor(status: number, code: string, detail: string) {
    super(code, detail);
    this.name = 'AnsweredInstead';
    this.status = status;
  }
}

/** The status the server sent for a request it answered in its handler's place, if it did. */
export function answeredInsteadStatus(signal: AbortSignal): number | undefined {
  return signal.aborted && signal.reason instanceof AnsweredInstead
    ? signal.reason.status
    : undefined;
}

/**
 * node:http adapter: `http.createServer(toNodeListener(handler))`. The request body is streamed
 * into the Request (the middleware enforces maxBodyBytes while reading it), and the request's
 * signal aborts when the client goes away.
 */
export function toNodeListener(
  handler: FetchHandler,
  options: NodeListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serveNode(
      handler,
      req,
      res,
      req.url ?? '/',
      undefined,
      options.onError,
      options.onRefused,
    );
  };
}

/** The shared body of the node:http and Express adapters. `body` overrides the stream (express.raw). */
export async function serveNode(
  handler: FetchHandler,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: Uint8Array | undefined,
  onError: (error: unknown) => void = logOncelyError,
  onRefused?: NodeListenerOptions['onRefused'],
): Promise<void> {
  const head = {
    method: req.method ?? 'GET',
    target: path,
    hosts: rawHeaderValues(req.rawHeaders, 'host'),
    httpVersion: req.httpVersion,
    encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
  };
  const target = readRequestTarget(head);
  if (target.kind === 'refused') {
    onRefused?.({ method: head.method, target: head.target, status: target.response.status });
    // The body is not wanted; reading it lets the connection close without a reset.
    req.resume();
    res.setHeader('connection', 'close');
    await writeResponse(target.response, res).catch(() => res.destroy());
    return;
  }
  const aborter = new AbortController();
  aborters.set(res, aborter);
  let pending = true;
  res.on('close', () => {
    if (!res.writableFinished) aborter.abort();
    // Answered in the handler's place (a timeout, a shutdown) while it still waits for a body
    // that will never come: end the wait, so the handler finishes and rolls back.
    if (pending && !req.complete) req.destroy();
  });
  let response: Response;
  let dropped = false;
  const connection: ConnectionControl = {
    drop: () => {
      dropped = true;
      req.socket.destroy();
    },
  };
  try {
    let request: Request;
    try {
      const bytes = body ?? (await readSmallBody(req));
      request = toRequest(req, target.url, bytes, aborter.signal);
    } catch (bodyError) {
      // The body never came whole (the client left, or the server answered 408 meanwhile): the
      // handler still runs, as it would have on a streamed body, and its body read fails.
      request = toRequest(req, target.url, undefined, aborter.signal, { failed: bodyError });
    }
    response = await handler(request, connection);
  } catch (error) {
    if (!aborter.signal.aborted) onError(error);
    response = problemResponse('internal_error', 'the request failed');
  } finally {
    pending = false;
  }
  // Dropped, or answered for the handler already (a timeout, the end of a shutdown's grace).
  if (dropped || res.headersSent || res.writableEnded) return;
  try {
    await writeResponse(response, res);
  } catch (error) {
    onError(error);
    res.destroy(error instanceof Error ? error : undefined);
  }
}

/**
 * Bodies up to this size that declare their length are read before the handler runs, into a
 * Request that is known to carry them (known-body.ts): no web stream to make and read on Node 20.
 * Larger or chunked bodies stream into the Request, and the middleware stops reading at its limit.
 */
export const READ_AHEAD_BYTES = 65_536;

/**
 * The whole body of a request that declares a Content-Length of at most READ_AHEAD_BYTES, or
 * undefined (GET, HEAD, a larger or chunked body: it is streamed instead). Rejects when the
 * request ends before its body does (the client went away, or the server cut it off).
 */
export function readSmallBody(req: IncomingMessage): Promise<Uint8Array> | undefined {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD' || req.readableEnded) return undefined;
  const declared = req.headers['content-length'];
  if (declared === undefined || req.headers['transfer-encoding'] !== undefined) return undefined;
  const length = Number(declared);
  if (!Number.isSafeInteger(length) || length < 0 || length > READ_AHEAD_BYTES) return undefined;
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => void chunks.push(chunk);
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onClose = (): void => {
      done();
      reject(new Error('the request ended before its body was read'));
    };
    const done = (): void => {
      req.off('data', onData).off('end', onEnd).off('error', onClose).off('close', onClose);
    };
    req.on('data', onData).once('end', onEnd).once('error', onClose).once('close', onClose);
  });
}

/**
 * A web Request for a node request; `body` replaces the stream when the bytes were read already.
 * `unread.failed`: reading them failed, and the Request's body fails with that error when read.
 */
export function toRequest(
  req: IncomingMessage,
  url: URL,
  body: Uint8Array | undefined,
  signal: AbortSignal,
  unread?: { readonly failed: unknown },
): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (!name.startsWith(':')) headers.append(name, req.rawHeaders[i + 1]!);
  }
  const method = req.method ?? 'GET';
  if (body !== undefined) return new NodeRequest(url, method, headers, body, signal);
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
  if (method !== 'GET' && method !== 'HEAD') {
    init.body =
      unread === undefined
        ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>)
        : new ReadableStream<Uint8Array>({
            start: (controller) => controller.error(unread.failed),
          });
    init.duplex = 'half'; // required by fetch for a streamed request body
  }
  return new Request(url, init);
}

/** Every value of one header as sent, in order (`req.headers` joins or drops repeats). */
export function rawHeaderValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const field = rawHeaders[i]!;
    // Compared by length first: no lower-cased copy of every other header's name.
    if (field.length === name.length && field.toLowerCase() === name)
      values.push(rawHeaders[i + 1]!);
  }
  return values;
}

/**
 * Writes a web Response to a node response (status, headers, cookies one by one, body streamed;
 * a body oncely made from bytes is written as those bytes, with its Content-Length).
 */
export async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  for (const [name, value] of response.headers)
    if (name !== 'set-cookie') res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  const known = knownResponseBody(response);
  if (response.body === null || known !== undefined) {
    res.end(known !== undefined && known.byteLength > 0 ? known : undefined);
    return;
  }
  await pipeline(
    Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>),
    res,
  );
}
