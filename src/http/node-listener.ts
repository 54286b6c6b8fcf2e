import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { logOncelyError } from './log-oncely-error.js';
import { problemResponse } from './problem.js';

/**
 * The one thing a web-standard handler cannot do itself: drop the connection without a reply
 * (a swallowed ack, seed 000). Given by the node adapters; after `drop()` the response is ignored.
 */
export interface ConnectionControl {
  drop(): void;
}

/** A web-standard handler: what the middleware and the adapters pass around. */
export type FetchHandler = (request: Request, connection?: ConnectionControl) => Response | Promise<Response>;

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** Told about errors the handler threw (the client gets a 500 problem). @default logOncelyError (stderr) */
  readonly onError?: (error: unknown) => void;
}

/**
 * node:http adapter: `http.createServer(toNodeListener(handler))`. The request body is streamed
 * into the Request (the middleware enforces maxBodyBytes while reading it), and the request's
 * signal aborts when the client goes away.
 */
export function toNodeListener(handler: FetchHandler, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serveNode(handler, req, res, req.url ?? '/', undefined, options.onError);
  };
}

/** The shared body of the node:http and Express adapters. `body` overrides the stream (express.raw). */
export async function serveNode(
  handler: FetchHandler,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: Uint8Array | undefined,
  onError: ((error: unknown) => void) = logOncelyError,
): Promise<void> {
  const aborter = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) aborter.abort();
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
    response = await handler(toRequest(req, path, body, aborter.signal), connection);
  } catch (error) {
    onError(error);
    response = problemResponse('internal_error', 'the request failed');
  }
  if (dropped) return;
  try {
    await writeResponse(response, res);
  } catch (error) {
    onError(error);
    res.destroy(error instanceof Error ? error : undefined);
  }
}

function toRequest(req: IncomingMessage, path: string, body: Uint8Array | undefined, signal: AbortSignal): Request {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const url = requestUrl(`${encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`, path);
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (!name.startsWith(':')) headers.append(name, req.rawHeaders[i + 1]!);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
  if (hasBody) {
    if (body !== undefined) init.body = new Uint8Array(body);
    else {
      init.body = Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>;
      init.duplex = 'half'; // required by fetch for a streamed request body
    }
  }
  return new Request(url, init);
}

/**
 * The request's URL: the origin, then the request target exactly as sent. Resolving the target
 * against the origin instead (`new URL(path, origin)`) would read `//x/y` as a
 * scheme-relative reference, host `x` and path `/y` (RFC 3986 section 4.2), though an
 * origin-form target is all path (RFC 9112 section 3.2.1). An absolute-form target (a request
 * through a proxy) is a whole URL already.
 */
function requestUrl(origin: string, target: string): URL {
  return target.startsWith('/') ? new URL(`${origin}${target}`) : new URL(target, origin);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  if (response.body === null) {
    res.end();
    return;
  }
  await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), res);
}
