import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Incoming } from '../incoming.js';
import { toRequest } from '../node-listener.js';
import { bytesWithin, readBodyWithin, type BodyRead } from '../read-body.js';
import type { RequestTarget } from '../request-target.js';

/**
 * A node request as the idempotency guard reads it: method, URL and headers straight from node's
 * own parse, and the body the adapter already read. The web Request, its Headers and its
 * AbortSignal are made only if something asks for them (a custom fingerprint reading headers,
 * onError, a 401), so a replay or a refusal makes none.
 */
export class NodeIncoming<Req extends IncomingMessage> implements Incoming {
  readonly method: string;
  readonly #res: ServerResponse;
  #watching = false;
  #closed = false;
  #aborter: AbortController | undefined;
  #onClose: ((finished: boolean) => void) | undefined;
  #request: Request | undefined;

  constructor(
    readonly req: Req,
    res: ServerResponse,
    private readonly target: RequestTarget,
    /** The body as the adapter read it, or undefined: then it is read from the request here. */
    private readonly body: Uint8Array | undefined,
  ) {
    this.method = req.method ?? 'GET';
    this.#res = res;
  }

  get url(): URL {
    return this.target.url;
  }

  get pathAndQuery(): string {
    return this.target.pathAndQuery;
  }

  /**
   * Calls `listener` when the response closes: `finished` false when the client went away before
   * the answer was written (at once, if it has), true when the response was finished (by the
   * final answer, or by a write that went past the adapter).
   */
  onClose(listener: (finished: boolean) => void): void {
    this.#onClose = listener;
    this.#watch();
    if (this.#closed) listener(false);
  }

  header(name: string): string | null {
    const value = this.req.headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  get aborted(): boolean {
    // Before anything listens, node's own state says it: a response closed before it finished.
    return this.#closed || (this.#res.destroyed && !this.#res.writableFinished);
  }

  throwIfAborted(): void {
    if (this.aborted) this.signal().throwIfAborted();
  }

  readBody(maxBytes: number): BodyRead | Promise<BodyRead> {
    if (this.body === undefined) return readBodyWithin(this.request(), maxBytes);
    return bytesWithin(this.body, maxBytes); // read already: no promise, no turn to wait
  }

  request(): Request {
    return (this.#request ??= toRequest(this.req, this.url, this.body, this.signal()));
  }

  /** Aborts when the client goes away before the answer is written (already, if it has). */
  private signal(): AbortSignal {
    if (this.#aborter === undefined) {
      this.#aborter = new AbortController();
      this.#watch();
      if (this.#closed) this.#aborter.abort();
    }
    return this.#aborter.signal;
  }

  /**
   * The one close listener of the request's life, added only when something must hear of a close
   * as it happens (a route running, a signal handed out): a replay or a refusal adds none.
   */
  #watch(): void {
    if (this.#watching) return;
    this.#watching = true;
    const res = this.#res;
    this.#closed = this.aborted;
    if (this.#closed) return;
    // `on`, not `once`: a response closes once, and once's wrapper is two more objects a request.
    res.on('close', () => {
      if (res.writableFinished) {
        this.#onClose?.(true);
        return;
      }
      this.#closed = true;
      this.#aborter?.abort();
      this.#onClose?.(false);
    });
  }
}
