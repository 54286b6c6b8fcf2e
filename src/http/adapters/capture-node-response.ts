import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { NULL_BODY_STATUSES } from '../../contract/null-body-status.js';
import type { AnswerBytes } from '../receipt-response.js';

/** A node response whose writes are being kept instead of sent. */
export interface CapturedResponse {
  /** Resolves with what the route answered, once it ends the response. */
  readonly done: Promise<AnswerBytes>;
  /** Rejects `done`: the route threw, or the client went away before it answered. */
  fail(error: unknown): void;
  /** Puts the response's own methods back and drops the headers the route set. Idempotent. */
  restore(): void;
}

type Callback = (error?: Error | null) => void;

/**
 * Lets an unchanged node-style route (Express's `res.json`, node's `res.end`) answer into a
 * buffer: status, headers and body become the answer (as bytes) the ledger stores as the
 * receipt, and only the final answer (that one, a replay, or a refusal) is written to the socket. Headers set
 * before the route ran (by earlier middleware) stay; the route's own are dropped on restore, so a
 * refusal never carries half of a failed route's headers.
 */
export function captureNodeResponse(res: ServerResponse): CapturedResponse {
  const before = new Set(res.getHeaderNames());
  const original = {
    write: res.write,
    end: res.end,
    writeHead: res.writeHead,
    flushHeaders: res.flushHeaders,
  };
  const chunks: Buffer[] = [];
  let resolve!: (answer: AnswerBytes) => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<AnswerBytes>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  // Failed while the route still runs (the client went away): `done` is awaited only once the
  // route returns, so the rejection must not count as unhandled meanwhile (it would end the
  // process); whoever awaits `done` still gets it.
  done.catch(() => {});
  let restored = false;

  const keep = (chunk: unknown, encoding: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array),
    );
  };
  const patched = res as unknown as Record<string, unknown>;
  patched['writeHead'] = (status: number, reason?: unknown, headers?: unknown): ServerResponse => {
    res.statusCode = status;
    if (typeof reason === 'string') res.statusMessage = reason;
    const given = typeof reason === 'object' && reason !== null ? reason : headers;
    if (Array.isArray(given))
      for (let i = 0; i + 1 < given.length; i += 2)
        res.setHeader(String(given[i]), given[i + 1] as string);
    else if (given)
      for (const [name, value] of Object.entries(given as OutgoingHttpHeaders))
        if (value !== undefined) res.setHeader(name, value);
    return res;
  };
  patched['flushHeaders'] = (): void => {};
  patched['write'] = (chunk: unknown, encoding?: unknown, callback?: Callback): boolean => {
    keep(chunk, encoding);
    (typeof encoding === 'function' ? (encoding as Callback) : callback)?.();
    return true;
  };
  patched['end'] = (chunk?: unknown, encoding?: unknown, callback?: Callback): ServerResponse => {
    keep(chunk, encoding);
    const status = res.statusCode;
    const body = NULL_BODY_STATUSES.has(status) ? new Uint8Array(0) : Buffer.concat(chunks);
    resolve({ status, headers: headerPairs(res), body });
    const cb = [chunk, encoding, callback].find((a) => typeof a === 'function') as
      | Callback
      | undefined;
    cb?.();
    return res;
  };

  return {
    done,
    fail: (error) => reject(error),
    restore() {
      if (restored) return;
      restored = true;
      Object.assign(res, original);
      for (const name of res.getHeaderNames()) if (!before.has(name)) res.removeHeader(name);
    },
  };
}

/** The headers set on `res` as a Headers object would list them (receipt-response.ts). */
function headerPairs(res: ServerResponse): Array<readonly [string, string]> {
  const pairs: Array<readonly [string, string]> = [];
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value === undefined) continue;
    if (name === 'set-cookie')
      for (const one of Array.isArray(value) ? value : [value]) pairs.push([name, String(one)]);
    else pairs.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
  }
  return pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
