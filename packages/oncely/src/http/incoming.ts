import { readBodyWithin, type BodyRead } from './read-body.js';

/**
 * What the idempotency guard reads of a request, whatever carried it in: a web Request (the
 * web-standard middleware, Hono, the services) or a node request (the Express and node:http
 * adapters). The node adapters answer a replay or a refusal without ever making a web Request;
 * on Node 20 making one, with its Headers, body stream and signal, costs about as much as the
 * rest of a replay. `request()` makes it when something asks.
 */
export interface Incoming {
  readonly method: string;
  /** The absolute URL, parsed (once, when first read). */
  readonly url: URL;
  /** The URL's `pathname` + `search`, what the default fingerprint reads. */
  readonly pathAndQuery: string;
  /** One header's value, repeats joined with ", " (as `Headers.get`), or null. */
  header(name: string): string | null;
  /** True once the client went away, or the server answered in the handler's place. */
  readonly aborted: boolean;
  /** Throws the abort's reason when `aborted`. */
  throwIfAborted(): void;
  /** The body, read once, within `maxBytes` (read-body.ts). */
  readBody(maxBytes: number): BodyRead | Promise<BodyRead>;
  /** The web Request (the same one on every call). */
  request(): Request;
}

/**
 * The Incoming of a web Request: every answer comes from the Request itself. A class, not an
 * object literal with getters: such a literal makes its accessors anew on every request, which
 * costs more than the rest of a replay's bookkeeping (guard-inputs.ts).
 */
class RequestIncoming implements Incoming {
  readonly method: string;
  #url: URL | undefined;

  constructor(private readonly incoming: Request) {
    this.method = incoming.method;
  }

  get url(): URL {
    return (this.#url ??= new URL(this.incoming.url));
  }

  get pathAndQuery(): string {
    return `${this.url.pathname}${this.url.search}`;
  }

  header(name: string): string | null {
    return this.incoming.headers.get(name);
  }

  get aborted(): boolean {
    return this.incoming.signal.aborted;
  }

  throwIfAborted(): void {
    this.incoming.signal.throwIfAborted();
  }

  readBody(maxBytes: number): Promise<BodyRead> {
    return readBodyWithin(this.incoming, maxBytes);
  }

  request(): Request {
    return this.incoming;
  }
}

/** The Incoming of a web Request (the web-standard middleware, Hono, the services). */
export function incomingOfRequest(request: Request): Incoming {
  return new RequestIncoming(request);
}
