import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveNode, type FetchHandler, type NodeListenerOptions } from './node-listener.js';

/** The part of an Express request the adapter reads (Express 5 types are not imported). */
interface ExpressRequestSlice extends IncomingMessage {
  readonly originalUrl?: string;
  readonly body?: unknown;
}

/**
 * Express adapter: `app.post('/notes', toExpressHandler(handler))` or `app.use(...)`. Mount it
 * before body parsers, or after `express.raw()`: the fingerprint needs the body's exact bytes,
 * which a JSON parser has already thrown away.
 */
export function toExpressHandler(
  handler: FetchHandler,
  options: NodeListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    const r = req as ExpressRequestSlice;
    const raw = r.body instanceof Uint8Array ? r.body : undefined;
    if (raw === undefined && r.readableEnded) {
      next(
        new Error(
          'oncely: the request body was consumed before the idempotency handler; mount it before body parsers, or use express.raw()',
        ),
      );
      return;
    }
    void serveNode(handler, req, res, r.originalUrl ?? req.url ?? '/', raw, options.onError);
  };
}
