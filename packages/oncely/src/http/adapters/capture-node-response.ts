import { ServerResponse, type OutgoingHttpHeaders } from 'node:http';
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
  /** True once `done` has its value: a later `fail` changes nothing, so need not be built. */
  readonly settled: boolean;
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
type CapturedMethod = (typeof CAPTURED_METHODS)[number];
type AnyMethod = (this: ServerResponse, ...args: unknown[]) => unknown;

/**
 * Each response's capture while it lasts. A WeakMap, not a property on the response: a property
 * added to an object whose prototype was changed (Express changes every response's) gives that
 * object a hidden class of its own, which V8 builds anew for each response (a few µs each).
 */
const captures = new WeakMap<ServerResponse, Capture>();

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
  const settle = (answer: AnswerBytes | CaptureFailure) => {
    captured.settled = true;
    resolve(answer);
  };
  captures.set(res, { chunks: [], kept, resolve: settle });
  const putBack = divert(res);
  let restored = false;
  // `settled` is a data property, not a getter: a getter in an object literal is a new closure on
  // each call, and V8 then gives every such object dictionary properties, not a shared hidden
  // class. With the getter, each request promoted 60 % more bytes to the old generation (17.6
  // KB, not 11.0 KB: --trace-gc-nvp, bench/anchors' SQLite row), which bench/instructions
  // counted as GC work.
  const captured: { -readonly [K in keyof CapturedResponse]: CapturedResponse[K] } = {
    done,
    settled: false,
    fail: (error) => settle(new CaptureFailure(error)),
    restore(keepHeaders) {
      if (restored) return;
      restored = true;
      captures.delete(res);
      putBack?.();
      if (keepHeaders) return;
      for (const name of res.getHeaderNames()) if (!before.includes(name)) res.removeHeader(name);
    },
  };
  return captured;
}

/**
 * Sends the response's writes to its capture; returns what puts them back, if anything must.
 * The capturing methods stay on the response once its capture has ended: they then pass each
 * call on to the response's own method, or its prototype's, so the response acts as before.
 * - A response of node's own class gets them as own properties, always the same functions in
 *   the same order, so every such response keeps sharing one hidden class. Swapping its
 *   prototype instead gave each response a hidden class of its own (V8 does not reuse the map
 *   across responses here), and every property access of node's http code on it then missed
 *   its inline caches: about a quarter of a new key's instructions (bench/middleware-cost).
 * - A response whose prototype the framework set (Express sets every response's to its app's)
 *   has a hidden class of its own already; it gets a capturing prototype over its own, made
 *   once per prototype, which measured cheaper there than own properties.
 * - When earlier middleware replaced one of those methods on `res` itself (on-headers does, for
 *   `writeHead`), an own property hides the prototype's: those responses get the capturing
 *   methods as own properties, and their own ones back on restore.
 */
function divert(res: ServerResponse): (() => void) | undefined {
  const prototype = Object.getPrototypeOf(res) as object;
  if (capturingPrototypes.has(prototype)) return undefined; // captured before: diverted already
  const capturing = capturingOver(prototype);
  const own = res as unknown as Record<string, unknown>;
  if (own['end'] === capturing.methods.end) return undefined; // diverted already, in place
  if (CAPTURED_METHODS.some((name) => Object.hasOwn(res, name))) {
    const original = CAPTURED_METHODS.map((name) => [name, own[name]] as const);
    for (const name of CAPTURED_METHODS) own[name] = capturing.methods[name];
    return () => {
      for (const [name, method] of original) own[name] = method;
    };
  }
  if (prototype === ServerResponse.prototype) {
    for (const name of CAPTURED_METHODS) own[name] = capturing.methods[name];
    return undefined;
  }
  Object.setPrototypeOf(res, capturing.prototype);
  return undefined;
}

interface Capturing {
  readonly prototype: object;
  readonly methods: Record<CapturedMethod, AnyMethod>;
}

/** Each response prototype (node's, an Express app's) and what captures over it. */
const capturingOf = new WeakMap<object, Capturing>();
/** The capturing prototypes made: a response that has one is diverted already. */
const capturingPrototypes = new WeakSet<object>();

function capturingOver(prototype: object): Capturing {
  let capturing = capturingOf.get(prototype);
  if (capturing !== undefined) return capturing;
  const parent = prototype as Record<CapturedMethod, AnyMethod>;
  const methods = {} as Record<CapturedMethod, AnyMethod>;
  for (const name of CAPTURED_METHODS) {
    const captureMethod = capturingMethods[name] as (capture: Capture, args: unknown[]) => unknown;
    methods[name] = function (this: ServerResponse, ...args: unknown[]): unknown {
      const capture = captures.get(this);
      if (capture !== undefined) return captureMethod.call(this, capture, args);
      // No capture (it ended): the response's own method, put back, or else its prototype's.
      const own = (this as unknown as Record<CapturedMethod, AnyMethod>)[name];
      return (own === methods[name] ? parent[name] : own).apply(this, args);
    };
  }
  const descriptors = Object.fromEntries(
    CAPTURED_METHODS.map((name) => [
      name,
      { value: methods[name], writable: true, configurable: true },
    ]),
  );
  capturing = { prototype: Object.create(prototype, descriptors) as object, methods };
  capturingOf.set(prototype, capturing);
  capturingPrototypes.add(capturing.prototype);
  return capturing;
}

function keep(capture: Capture, chunk: unknown, encoding: unknown): void {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
  capture.chunks.push(
    typeof chunk === 'string'
      ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      : Buffer.from(chunk as Uint8Array),
  );
}

/** What each method does while its response is captured: `this` is the response. */
const capturingMethods = {
  writeHead(this: ServerResponse, _capture: Capture, args: unknown[]): ServerResponse {
    const [status, reason, headers] = args;
    this.statusCode = status as number;
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
  write(this: ServerResponse, capture: Capture, args: unknown[]): boolean {
    const [chunk, encoding, callback] = args;
    keep(capture, chunk, encoding);
    (typeof encoding === 'function'
      ? (encoding as Callback)
      : (callback as Callback | undefined))?.();
    return true;
  },
  end(this: ServerResponse, capture: Capture, args: unknown[]): ServerResponse {
    const [chunk, encoding] = args;
    keep(capture, chunk, encoding);
    const status = this.statusCode;
    const body = NULL_BODY_STATUSES.has(status) ? new Uint8Array(0) : Buffer.concat(capture.chunks);
    capture.resolve({ status, headers: keptPairs(this, capture.kept), body });
    (args.find((a) => typeof a === 'function') as Callback | undefined)?.();
    return this;
  },
};

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
