import { IncomingMessage, type ServerResponse } from 'node:http';
import type { IdempotencyContext } from '../idempotency-middleware.js';
import type { AdapterOptions } from './adapter-options.js';
import { createNodeGuard } from './node-guard.js';
import { setRouteContext } from './route-context.js';

export type NodeIdempotencyOptions<Tx> = AdapterOptions<Tx, IncomingMessage>;

/** A node:http request listener, as `http.createServer` takes it. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * node:http: the same middleware around an unchanged `(req, res)` listener:
 *
 * ```ts
 * http.createServer(idempotentListener({ ledger }, (req, res) => {
 *   let body = '';
 *   req.on('data', (c) => (body += c)).on('end', () => res.writeHead(201).end(save(body)));
 * }));
 * ```
 * The body is read once (within maxBodyBytes) for the fingerprint; the listener gets a request
 * that streams the same bytes again. Its response is captured as the receipt and replayed with
 * `Idempotent-Replayed: true`; `idempotencyOf(req)` gives it the ledger's `sql`, `tx` and key.
 * `scopeOf` gets the node request.
 */
export function idempotentListener<Tx>(
  options: NodeIdempotencyOptions<Tx>,
  listener: NodeListener,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const guard = createNodeGuard<Tx, IncomingMessage>(options);
  const { methodSet, maxBodyBytes } = guard.options;
  return (req, res) => {
    const serve = async (): Promise<void> => {
      if (!methodSet.has((req.method ?? 'GET').toUpperCase())) {
        await listener(req, res);
        return;
      }
      // Read here, not by the middleware: a request passed through (no key, pass-through mode)
      // must still reach the listener with its body.
      const bytes = await readAtMost(req, maxBodyBytes);
      const route = (context: IdempotencyContext<Tx> | undefined): unknown => {
        const again = replayable(req, bytes);
        if (context !== undefined) setRouteContext(again, context as IdempotencyContext<unknown>);
        return listener(again, res);
      };
      await guard(req, res, req.url ?? '/', bytes, route);
    };
    // Settles once the request is done with, its transaction committed or rolled back (node:http
    // ignores it; a server that drains before it stops, or a bench that counts, can wait on it).
    return serve().catch((error: unknown) => {
      res.destroy(error instanceof Error ? error : undefined);
    });
  };
}

/**
 * The body, read until it ends or passes `maxBytes`: then what was read so far, one chunk over
 * the limit, so the middleware answers 413; the rest is drained unbuffered (breaking off the
 * stream instead would destroy the socket before the 413 is written).
 */
function readAtMost(req: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total <= maxBytes) return;
      req.off('data', onData);
      req.resume();
      resolve(Buffer.concat(chunks));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/**
 * The fields node's IncomingMessage makes for itself (the same for every request of this Node):
 * any other field of a request was set by the app. Read once, off the first fresh copy.
 */
let ownFields: ReadonlySet<string> | undefined;

/** A request like `req` whose body streams `bytes` again (the original stream was read). */
function replayable(req: IncomingMessage, bytes: Uint8Array): IncomingMessage {
  const again = new IncomingMessage(req.socket);
  const own = (ownFields ??= new Set(Object.keys(again)));
  again.method = req.method;
  again.url = req.url;
  again.httpVersion = req.httpVersion;
  again.httpVersionMajor = req.httpVersionMajor;
  again.httpVersionMinor = req.httpVersionMinor;
  again.headers = req.headers;
  again.rawHeaders = req.rawHeaders;
  // What the app's earlier steps set on the request (an authenticated `user`) comes along.
  // Keys, not entries: a request has some 40 fields, and a pair array for each is garbage.
  const fields = req as unknown as Record<string, unknown>;
  for (const name of Object.keys(req))
    if (!own.has(name)) (again as unknown as Record<string, unknown>)[name] = fields[name];
  if (bytes.byteLength > 0) again.push(Buffer.from(bytes));
  again.push(null);
  again.complete = true;
  return again;
}
