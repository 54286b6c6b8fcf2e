import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Incoming } from '../incoming.js';
import { toRequest } from '../node-listener.js';
import { readBodyWithin, type BodyRead } from '../read-body.js';

/**
 * A node request as the idempotency guard reads it: method, URL and headers straight from node's
 * own parse, and the body the adapter already read. The web Request, its Headers and its
 * AbortSignal are made only if something asks for them (a custom fingerprint reading headers,
 * onError, a 401), so a replay or a refusal makes none.
 */
export class NodeIncoming<Req extends IncomingMessage> implements Incoming {
  readonly method: string;
  readonly url: string;
  #closed = false;
  #aborter: AbortController | undefined;
  #request: Request | undefined;

  constructor(
    readonly req: Req,
    res: ServerResponse,
    private readonly parsedUrl: URL,
    /** The body as the adapter read it, or undefined: then it is read from the request here. */
    private readonly body: Uint8Array | undefined,
  ) {
    this.method = req.method ?? 'GET';
    this.url = parsedUrl.href;
    res.once('close', () => {
      if (res.writableFinished) return;
      this.#closed = true;
      this.#aborter?.abort();
    });
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
    return Promise.resolve(
      this.body.byteLength > maxBytes
        ? { kind: 'too_large', limitBytes: maxBytes }
        : { kind: 'ok', bytes: this.body },
    );
  }

  request(): Request {
    return (this.#request ??= toRequest(this.req, this.parsedUrl, this.body, this.signal()));
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
