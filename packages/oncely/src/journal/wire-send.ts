import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { DEFAULT_NODE_HTTP_FETCH_OPTIONS } from '../client/node-http-fetch.js';
import type { Clock } from '../time/clock.js';
import { createDeadlineSweep } from './deadline-sweep.js';

/** One answer as it came off the wire: no Response, Headers or stream is made for it. */
export interface WireAnswer {
  readonly status: number;
  /** Node's `rawHeaders`: names and values alternating, as the receiver wrote them. */
  readonly rawHeaders: readonly string[];
  /** The body's first `keepBytes` bytes (the whole body is read: a reply cut short is no answer). */
  readonly body: Uint8Array;
}

export interface WireRequest {
  readonly url: URL;
  readonly method: string;
  /** Lower-case names. */
  readonly headers: Record<string, string>;
  readonly body: Uint8Array | null;
  /** The attempt ends with a TimeoutError after this long on the sweep's timer. */
  readonly limitMs: number;
}

/** Sends one request at a time per call; many in flight share the agents and one timeout sweep. */
export type WireSend = (request: WireRequest) => Promise<WireAnswer>;

/**
 * The outbox worker's own sender: node:http and node:https `request` on keep-alive agents, the
 * answer handed back as status, raw headers and bytes. It behaves as the worker's default fetch
 * (createNodeHttpFetch) did under the client: no redirect followed, no compression asked for,
 * the body read within the attempt's limit, transport failures rejected with Node's own errors
 * and a timeout with a `TimeoutError`, so the policy classifies each alike. What it leaves out is
 * the Fetch layer (a Response, Headers, a web stream, an AbortSignal and a timer per attempt).
 */
export function createWireSend(
  timer: Clock,
  keepBytes: number,
  idleMs: number = DEFAULT_NODE_HTTP_FETCH_OPTIONS.idleMs,
): WireSend {
  const sweep = createDeadlineSweep(timer);
  const http = new HttpAgent({ keepAlive: true, timeout: idleMs });
  const https = new HttpsAgent({ keepAlive: true, timeout: idleMs });
  return (wire) =>
    new Promise<WireAnswer>((resolve, reject) => {
      const secure = wire.url.protocol === 'https:';
      if (wire.body !== null) wire.headers['content-length'] ??= String(wire.body.byteLength);
      let done = false;
      const finish = (error: unknown, answer?: WireAnswer): void => {
        if (done) return;
        done = true;
        unwatch();
        if (answer === undefined) reject(error);
        else resolve(answer);
      };
      let request: ReturnType<typeof httpRequest>;
      try {
        request = (secure ? httpsRequest : httpRequest)(wire.url, {
          method: wire.method,
          headers: wire.headers,
          agent: secure ? https : http,
        });
      } catch (error) {
        reject(error); // a header value Node refuses: nothing left
        return;
      }
      const unwatch = sweep.watch(wire.limitMs, () => {
        const reason = new DOMException(
          `attempt timed out after ${wire.limitMs} ms`,
          'TimeoutError',
        );
        finish(reason);
        request.destroy();
      });
      request.on('error', finish);
      request.on('response', (response) => readAnswer(response, keepBytes, finish));
      request.end(wire.body ?? undefined);
    });
}

/** Reads the whole body, keeping its first `keepBytes` bytes, then finishes with the answer. */
function readAnswer(
  response: IncomingMessage,
  keepBytes: number,
  finish: (error: unknown, answer?: WireAnswer) => void,
): void {
  const chunks: Buffer[] = [];
  let kept = 0;
  response.on('data', (chunk: Buffer) => {
    if (kept >= keepBytes) return;
    chunks.push(chunk);
    kept += chunk.byteLength;
  });
  response.on('error', finish);
  // A connection closed before the whole body arrived: Node says so with 'error' (ECONNRESET,
  // "aborted") on most paths; 'close' without 'end' catches the rest.
  response.on('close', () => {
    if (!response.complete) finish(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
  });
  response.on('end', () => {
    const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const length = Math.min(all.byteLength, keepBytes);
    finish(undefined, {
      status: response.statusCode ?? 0,
      rawHeaders: response.rawHeaders,
      // A plain Uint8Array, as Response.arrayBuffer gave: a Buffer compares unequal to one.
      body: new Uint8Array(all.buffer, all.byteOffset, length),
    });
  });
}

/** A header of a raw list, as `Headers.get` reads it: repeated fields joined by ", ", else null. */
export function rawHeader(rawHeaders: readonly string[], lowerName: string): string | null {
  let value: string | null = null;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== lowerName.length || name.toLowerCase() !== lowerName) continue;
    value = value === null ? rawHeaders[i + 1]! : `${value}, ${rawHeaders[i + 1]}`;
  }
  return value;
}
