import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { NULL_BODY_STATUSES } from '../contract/null-body-status.js';

export interface NodeHttpFetchOptions {
  /**
   * How long an idle connection is kept for the next request, unless the server's Keep-Alive
   * header names a shorter time (undici's default too). @default 4000
   */
  readonly idleMs?: number;
}

export const DEFAULT_NODE_HTTP_FETCH_OPTIONS = { idleMs: 4000 } as const;

/**
 * A fetch for requests whose body is text or bytes, over node:http and node:https with
 * keep-alive agents of its own: the outbox worker's default sender. The global fetch (undici)
 * builds a web Request, header lists and web streams for every call; a worker sends many small
 * requests, and this path costs a fraction of the CPU time per send. It differs on purpose:
 *
 * - Redirects are not followed: a 3xx is the receiver's answer. (fetch turns a POST answered 301
 *   or 302 into a GET without its body, which would count as a delivery.)
 * - No Accept-Encoding goes out, so the body comes back as the receiver wrote it, never compressed.
 * - The body is read whole before the promise resolves, under the same signal.
 *
 * Transport failures reject with Node's own errors (ECONNREFUSED, ECONNRESET, ...), which the
 * client classifies as fetch's causes are. Anything else (a Request object, a URL that is not
 * http or https, a FormData, Blob or stream body, a `redirect` option) goes to globalThis.fetch.
 */
export function createNodeHttpFetch(options: NodeHttpFetchOptions = {}): typeof globalThis.fetch {
  const idleMs = options.idleMs ?? DEFAULT_NODE_HTTP_FETCH_OPTIONS.idleMs;
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, timeout: idleMs }),
    'https:': new HttpsAgent({ keepAlive: true, timeout: idleMs }),
  };
  return (input, init = {}) => {
    const url = typeof input === 'string' ? parseUrl(input) : input instanceof URL ? input : null;
    const body = bodyBytes(init.body);
    if (
      url === null ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      body === undefined ||
      init.redirect !== undefined
    )
      return globalThis.fetch(input, init);
    return send(url, init.method ?? 'GET', headerRecord(init.headers), body, init.signal, agents);
  };
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array | null,
  signal: AbortSignal | null | undefined,
  agents: { 'http:': HttpAgent; 'https:': HttpsAgent },
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const https = url.protocol === 'https:';
    if (body !== null) headers['content-length'] ??= String(body.byteLength);
    const request = (https ? httpsRequest : httpRequest)(url, {
      method,
      headers,
      agent: https ? agents['https:'] : agents['http:'],
    });
    const onAbort = (): void => {
      request.destroy();
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = (): void => signal?.removeEventListener('abort', onAbort);
    request.on('error', (error) => {
      done();
      reject(error);
    });
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => {
        done();
        reject(error);
      });
      // A connection closed before the whole body arrived: Node says so with 'error' (ECONNRESET,
      // "aborted") on most paths; 'close' without 'end' catches the rest.
      response.on('close', () => {
        if (response.complete) return;
        done();
        reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      });
      response.on('end', () => {
        done();
        try {
          resolve(toResponse(response, method, Buffer.concat(chunks)));
        } catch (error) {
          reject(error);
        }
      });
    });
    request.end(body ?? undefined);
  });
}

function toResponse(response: IncomingMessage, method: string, bytes: Buffer): Response {
  const status = response.statusCode ?? 0;
  // fetch refuses a status out of 200..599 as a network error; so does this path.
  if (status < 200 || status > 599)
    throw new TypeError('fetch failed', { cause: new Error(`invalid response status ${status}`) });
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const empty = NULL_BODY_STATUSES.has(status) || method === 'HEAD';
  return new Response(empty ? null : (bytes as Uint8Array<ArrayBuffer>), {
    status,
    statusText: response.statusMessage ?? '',
    headers,
  });
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null; // fetch says why
  }
}

/** The body as bytes, null for none, undefined for a kind this path leaves to fetch. */
function bodyBytes(body: BodyInit | null | undefined): Uint8Array | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body))
    return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return undefined;
}

/** Headers of any form fetch takes, as one object (names lower-cased, repeated ones joined). */
function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  new Headers(init).forEach((value, name) => (record[name] = value));
  return record;
}
