import type { IncomingMessage, ServerResponse } from 'node:http';
import { createIdempotencyMiddleware, type IdempotencyContext } from '../idempotency-middleware.js';
import type { ResolvedIdempotencyOptions } from '../idempotency-options.js';
import { rawHeaderValues, toRequest, writeResponse } from '../node-listener.js';
import { readRequestTarget } from '../request-target.js';
import { webOptions, type AdapterOptions } from './adapter-options.js';
import { captureNodeResponse, type CapturedResponse } from './capture-node-response.js';

/**
 * Runs the route of one request: with a context for a guarded request (its response is captured),
 * without one for a request the middleware passes through (it answers the socket directly).
 * It may return a promise; a rejection is the route failing.
 */
export type NodeRoute<Tx> = (context: IdempotencyContext<Tx> | undefined) => unknown;

/** Guards one node-style request (Express, node:http) in front of its unchanged route. */
export type NodeGuard<Tx, Req extends IncomingMessage> = ((
  req: Req,
  res: ServerResponse,
  path: string,
  body: Uint8Array | undefined,
  route: NodeRoute<Tx>,
) => Promise<void>) & {
  readonly options: ResolvedIdempotencyOptions<Tx>;
};

/** The answer that means "the route answered the socket itself": nothing left to write. */
const PASSED_THROUGH = new Response(null, { status: 299 });

/**
 * The shared core of the Express and node:http adapters: the web-standard middleware decides
 * (scope, key, body, ledger), the route runs inside the ledger's transaction with its response
 * captured, and the final answer (first response, replay, or refusal) is written once.
 */
export function createNodeGuard<Tx, Req extends IncomingMessage>(
  options: AdapterOptions<Tx, Req>,
): NodeGuard<Tx, Req> {
  const origins = new WeakMap<Request, Req>();
  const middleware = createIdempotencyMiddleware<Tx>(webOptions(options, origins));
  const { methodSet, onError } = middleware.options;

  const guard = async (
    req: Req,
    res: ServerResponse,
    path: string,
    body: Uint8Array | undefined,
    route: NodeRoute<Tx>,
  ): Promise<void> => {
    if (!methodSet.has((req.method ?? 'GET').toUpperCase())) {
      await route(undefined);
      return;
    }
    const aborter = new AbortController();
    let capture: CapturedResponse | undefined;
    res.once('close', () => {
      if (res.writableFinished) return;
      aborter.abort();
      capture?.fail(new Error('the client went away before the route answered'));
    });
    // The same reading of Host and target as toNodeListener: a bad Host is refused, not routed.
    const target = readRequestTarget({
      method: req.method ?? 'GET',
      target: path,
      hosts: rawHeaderValues(req.rawHeaders, 'host'),
      httpVersion: req.httpVersion,
      encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
    });
    if (target.kind === 'refused') {
      await writeResponse(target.response, res);
      return;
    }
    const request = toRequest(req, target.url, body, aborter.signal);
    origins.set(request, req);
    const answer = await middleware(request, async (_forwarded, context) => {
      if (context === undefined) {
        await route(undefined);
        return PASSED_THROUGH;
      }
      const captured = (capture = captureNodeResponse(res));
      try {
        await route(context);
      } catch (error) {
        captured.fail(error);
      }
      return captured.done;
    });
    capture?.restore();
    if (answer === PASSED_THROUGH) return;
    try {
      await writeResponse(answer, res);
    } catch (error) {
      onError(error, request);
      res.destroy(error instanceof Error ? error : undefined);
    }
  };
  return Object.assign(guard, { options: middleware.options });
}
