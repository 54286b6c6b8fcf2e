import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Incoming } from '../incoming.js';
import { toRequest } from '../node-listener.js';
import { bytesWithin, readBodyWithin, type BodyRead } from '../read-body.js';

/**
 * A node request as the idempotency guard reads it: method, URL and headers straight from node's
 * own parse, and the body the adapter already read. The web Request, its Headers and its
 * AbortSignal are made only if something asks for them (a custom fingerprint reading headers,
 * onError, a 401), so a replay or a refusal makes none.
 */
export class NodeIncoming<Req extends IncomingMessage> implements Incoming {
  readonly method: string;
  #closed = false;
  #aborter: AbortController | undefined;
  #onAbort: (() => void) | undefined;
  #request: Request | undefined;

  constructor(
    readonly req: Req,
    res: ServerResponse,
    readonly url: URL,
    /** The body as the adapter read it, or undefined: then it is read from the request here. */
    private readonly body: Uint8Array | undefined,
  ) {
    this.method = req.method ?? 'GET';
    // The one listener of the request's life: the response closed before it was written.
    res.once('close', () => {
      if (res.writableFinished) return;
      this.#closed = true;
      this.#aborter?.abort();
      this.#onAbort?.();
    });
  }

  /** Calls `listener` if the client goes away before the answer is written. */
  onAbort(listener: () => void): void {
    this.#onAbort = listener;
  }

  header(name: string): string | null {
    const value = this.req.headers[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  get aborted(): boolean {
    return this.#closed;
  }

  throwIfAborted(): void {
    if (this.#closed) this.signal().throwIfAborted();
  }

  readBody(maxBytes: number): Promise<BodyRead> {
    if (this.body === undefined) return readBodyWithin(this.request(), maxBytes);
    return Promise.resolve(bytesWithin(this.body, maxBytes));
  }

  request(): Request {
    return (this.#request ??= toRequest(this.req, this.url, this.body, this.signal()));
  }

  /** Aborts when the client goes away before the answer is written (already, if it has). */
  private signal(): AbortSignal {
    if (this.#aborter === undefined) {
      this.#aborter = new AbortController();
      if (this.#closed) this.#aborter.abort();
    }
    return this.#aborter.signal;
  }
}
