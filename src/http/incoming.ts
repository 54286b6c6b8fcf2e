import { readBodyWithin, type BodyRead } from './read-body.js';

/**
 * What the idempotency guard reads of a request, whatever carried it in: a web Request (the
 * web-standard middleware, Hono, the services) or a node request (the Express and node:http
 * adapters). The node adapters answer a replay or a refusal without ever making a web Request;
 * on Node 20 making one, with its Headers, body stream and signal, costs about as much as the
 * rest of a replay (docs/performance.md, "Speed"). `request()` makes it when something asks.
 */
export interface Incoming {
  readonly method: string;
  /** The absolute URL, parsed (once). */
  readonly url: URL;
  /** One header's value, repeats joined with ", " (as `Headers.get`), or null. */
  header(name: string): string | null;
  /** True once the client went away, or the server answered in the handler's place. */
  readonly aborted: boolean;
  /** Throws the abort's reason when `aborted`. */
  throwIfAborted(): void;
  /** The body, read once, within `maxBytes` (read-body.ts). */
  readBody(maxBytes: number): Promise<BodyRead>;
  /** The web Request (the same one on every call). */
  request(): Request;
}

/** The Incoming of a web Request: every answer comes from the Request itself. */
export function incomingOfRequest(request: Request): Incoming {
  let url: URL | undefined;
  return {
    method: request.method,
    get url() {
      return (url ??= new URL(request.url));
    },
    header: (name) => request.headers.get(name),
    get aborted() {
      return request.signal.aborted;
    },
    throwIfAborted: () => request.signal.throwIfAborted(),
    readBody: (maxBytes) => readBodyWithin(request, maxBytes),
    request: () => request,
  };
}
