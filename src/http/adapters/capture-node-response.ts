import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { NULL_BODY_STATUSES } from '../../contract/null-body-status.js';
import type { AnswerBytes } from '../receipt-response.js';

/** A node response whose writes are being kept instead of sent. */
export interface CapturedResponse {
  /**
   * Resolves with what the route answered, once it ends the response, or with the failure that
   * came first. Never rejects: a failure while nobody awaits it yet is no unhandled rejection.
   */
  readonly done: Promise<AnswerBytes | CaptureFailure>;
  /** Settles `done` with a failure: the route threw, or the client went away before it answered. */
  fail(error: unknown): void;
  /**
   * Puts the response's own methods back. `keepHeaders`: the route's answer is sent as it set it
   * (its headers stay on `res`); else the headers the route set are dropped, so a refusal never
   * carries half of a failed route's headers. Idempotent.
   */
  restore(keepHeaders: boolean): void;
}

/** The route failed before it answered (it threw, or the client went away). */
export class CaptureFailure {
  constructor(readonly error: unknown) {}
}

type Callback = (error?: Error | null) => void;

/** What one capture keeps while the route answers into it. */
interface Capture {
  readonly chunks: Buffer[];
  /** The headers a receipt keeps (lower-case names, sorted). */
  readonly kept: readonly string[];
  resolve(answer: AnswerBytes): void;
}

/** The methods a capture replaces: every way a route can write to the socket. */
const CAPTURED_METHODS = ['writeHead', 'flushHeaders', 'write', 'end'] as const;

/** Where a capturing response keeps its capture (one property, the same on every response). */
const CAPTURE = Symbol('oncely.capture');
type Capturing = ServerResponse & { [CAPTURE]?: Capture | undefined };

/**
 * Lets an unchanged node-style route (Express's `res.json`, node's `res.end`) answer into a
 * buffer: status, the headers in `kept` (a receipt's allow-list, lower-case and sorted) and body
 * become the answer (as bytes) the ledger stores as the receipt, and only the final answer (that
 * one, a replay, or a refusal) is written to the socket. Headers set before the route ran (by
 * earlier middleware) stay on restore; the route's own stay only for its own answer.
 */
export function captureNodeResponse(
  res: ServerResponse,
  kept: readonly string[],
): CapturedResponse {
  const before = res.getHeaderNames();
  let resolve!: (answer: AnswerBytes | CaptureFailure) => void;
  const done = new Promise<AnswerBytes | CaptureFailure>((ok) => {
    resolve = ok;
  });
  const capturing = res as Capturing;
  capturing[CAPTURE] = { chunks: [], kept, resolve };
  const putBack = divert(capturing);
  let restored = false;
  return {
    done,
    fail: (error) => resolve(new CaptureFailure(error)),
    restore(keepHeaders) {
      if (restored) return;
      restored = true;
      putBack();
      capturing[CAPTURE] = undefined;
      if (keepHeaders) return;
      for (const name of res.getHeaderNames()) if (!before.includes(name)) res.removeHeader(name);
    },
  };
}

/**
 * Sends the response's writes to its capture; returns what puts them back. Usually by giving
 * `res` a capturing prototype (made once per prototype) and then its own one again: adding four
 * fresh closures to every response, and putting the originals back as own properties, cost more
 * CPU than the rest of the capture (a profile of bench/anchors: most of this file's time, and
 * garbage). When earlier middleware replaced one of those methods on `res` itself (on-headers
 * does, for `writeHead`), an own property hides the prototype's: those responses get the
 * capturing methods as own properties, and their own ones back.
 */
function divert(res: Capturing): () => void {
  if (CAPTURED_METHODS.some((name) => Object.hasOwn(res, name))) {
    const own = res as unknown as Record<string, unknown>;
    const original = CAPTURED_METHODS.map((name) => [name, own[name]] as const);
    for (const name of CAPTURED_METHODS) own[name] = capturingMethods[name];
    return () => {
      for (const [name, method] of original) own[name] = method;
    };
  }
  const prototype = Object.getPrototypeOf(res) as object;
  let capturingPrototype = capturingPrototypes.get(prototype);
  if (capturingPrototype === undefined) {
    capturingPrototype = Object.create(prototype, methodDescriptors) as object;
    capturingPrototypes.set(prototype, capturingPrototype);
  }
  Object.setPrototypeOf(res, capturingPrototype);
  return () => Object.setPrototypeOf(res, prototype);
}

/** Each response prototype (node's, an Express app's) and the capturing one made over it. */
const capturingPrototypes = new WeakMap<object, object>();

function keep(capture: Capture, chunk: unknown, encoding: unknown): void {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
  capture.chunks.push(
    typeof chunk === 'string'
      ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      : Buffer.from(chunk as Uint8Array),
  );
}

/** The capturing methods, shared by every capture: `this` is the response, its capture on it. */
const capturingMethods = {
  writeHead(this: Capturing, status: number, reason?: unknown, headers?: unknown): ServerResponse {
    this.statusCode = status;
    if (typeof reason === 'string') this.statusMessage = reason;
    const given = typeof reason === 'object' && reason !== null ? reason : headers;
    if (Array.isArray(given))
      for (let i = 0; i + 1 < given.length; i += 2)
        this.setHeader(String(given[i]), given[i + 1] as string);
    else if (given)
      for (const [name, value] of Object.entries(given as OutgoingHttpHeaders))
        if (value !== undefined) this.setHeader(name, value);
    return this;
  },
  flushHeaders(): void {},
  write(this: Capturing, chunk: unknown, encoding?: unknown, callback?: Callback): boolean {
    keep(captureOf(this), chunk, encoding);
    (typeof encoding === 'function' ? (encoding as Callback) : callback)?.();
    return true;
  },
  end(this: Capturing, chunk?: unknown, encoding?: unknown, callback?: Callback): ServerResponse {
    const capture = captureOf(this);
    keep(capture, chunk, encoding);
    const status = this.statusCode;
    const body = NULL_BODY_STATUSES.has(status) ? new Uint8Array(0) : Buffer.concat(capture.chunks);
    capture.resolve({ status, headers: keptPairs(this, capture.kept), body });
    const cb = [chunk, encoding, callback].find((a) => typeof a === 'function') as
      | Callback
      | undefined;
    cb?.();
    return this;
  },
};

const methodDescriptors: PropertyDescriptorMap = Object.fromEntries(
  CAPTURED_METHODS.map((name) => [
    name,
    { value: capturingMethods[name], writable: true, configurable: true },
  ]),
);

/**
 * The response's capture. A write through a capturing method kept from before the capture ended
 * (a route that saved `res.end` and calls it late) goes nowhere, as it did when the capture's
 * methods were closures: the answer was taken already.
 */
function captureOf(res: Capturing): Capture {
  return res[CAPTURE] ?? { chunks: [], kept: [], resolve: () => {} };
}

/**
 * The receipt's headers set on `res`, as a Headers object would list them (receipt-response.ts):
 * only the allow-listed names are looked up, not every header the route set (set-cookie is never
 * one: a replay must not hand out a session).
 */
function keptPairs(res: ServerResponse, kept: readonly string[]): Array<readonly [string, string]> {
  const pairs: Array<readonly [string, string]> = [];
  for (const name of kept) {
    const value = res.getHeader(name);
    if (value !== undefined)
      pairs.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
  }
  return pairs;
}
