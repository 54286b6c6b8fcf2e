import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidOptionError, OncelyError } from '../../contract/errors.js';
import { createIdempotencyGuard, type IdempotencyContext } from '../idempotency-guard.js';
import {
  resolveIdempotencyOptions,
  SINGLE_TENANT_SCOPE,
  type ResolvedIdempotencyOptions,
} from '../idempotency-options.js';
import { rawHeaderValues, writeResponse } from '../node-listener.js';
import { readRequestTarget } from '../request-target.js';
import type { AdapterOptions } from './adapter-options.js';
import {
  CaptureFailure,
  captureNodeResponse,
  type CapturedResponse,
} from './capture-node-response.js';
import { NodeIncoming } from './node-incoming.js';
import { writeAnswer, writeOwnAnswer } from './write-answer.js';

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

/**
 * The route's answer reached the socket without passing the capture (it is not stored, and the
 * route's writes roll back). Express does this to a route in a sub-app mounted after the
 * middleware: entering an app gives the response that app's prototype, over the capture's.
 */
export class AnsweredPastCaptureError extends OncelyError {
  constructor() {
    super(
      'answered_past_capture',
      "the route's answer went out without passing oncely, so it was not stored and its writes were rolled back; mount idempotency() in the Express app that holds the route (a sub-app mounted after it replaces the response's methods)",
    );
    this.name = 'AnsweredPastCaptureError';
  }
}

/** The answer that means "the route answered the socket itself": nothing left to write. */
const PASSED_THROUGH = new Response(null, { status: 299 });

/**
 * The shared core of the Express and node:http adapters: the idempotency guard decides (scope,
 * key, body, ledger) on the node request itself (node-incoming.ts: no web Request unless asked),
 * the route runs inside the ledger's transaction with its response captured, and the final answer
 * (first response, replay, or refusal) is written once, from bytes.
 */
export function createNodeGuard<Tx, Req extends IncomingMessage>(
  options: AdapterOptions<Tx, Req>,
): NodeGuard<Tx, Req> {
  const { scopeOf, ...rest } = options;
  if (scopeOf !== undefined && typeof scopeOf !== 'function')
    throw new InvalidOptionError(
      'scopeOf',
      scopeOf,
      "a function (the framework's request) => scope | undefined",
    );
  const o = resolveIdempotencyOptions<Tx>(rest, scopeOf !== undefined);
  const keptHeaders = [...o.receiptHeaderSet].sort();
  const idempotencyGuard = createIdempotencyGuard<Tx, unknown, NodeIncoming<Req>>(
    o,
    scopeOf === undefined ? () => SINGLE_TENANT_SCOPE : (incoming) => scopeOf(incoming.req),
  );

  const guard = async (
    req: Req,
    res: ServerResponse,
    path: string,
    body: Uint8Array | undefined,
    route: NodeRoute<Tx>,
  ): Promise<void> => {
    if (!o.methodSet.has((req.method ?? 'GET').toUpperCase())) {
      await route(undefined);
      return;
    }
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
    let capture: CapturedResponse | undefined;
    const incoming = new NodeIncoming(req, res, target, body);
    const answer = await idempotencyGuard(incoming, async (_incoming, context) => {
      if (context === undefined) {
        await route(undefined);
        return PASSED_THROUGH;
      }
      const captured = (capture = captureNodeResponse(res, keptHeaders));
      incoming.onClose((finished) => {
        // Usually the route answered already: then no error (and no stack trace) is built.
        if (captured.settled) return;
        captured.fail(
          finished
            ? new AnsweredPastCaptureError()
            : new Error('the client went away before the route answered'),
        );
      });
      try {
        await route(context);
      } catch (error) {
        captured.fail(error);
      }
      const answer = await captured.done;
      if (answer instanceof CaptureFailure) throw answer.error;
      return answer;
    });
    if (answer === PASSED_THROUGH) return;
    if (res.writableEnded) {
      capture?.restore(true); // answered past the capture: the guard has reported it
      return;
    }
    // The route's own answer goes out as it set it: its headers are still on `res`.
    const own = capture !== undefined && !(answer instanceof Response) && answer.kind === 'first';
    capture?.restore(own);
    try {
      if (own) writeOwnAnswer(answer.receipt, res);
      else await writeAnswer(answer, res);
    } catch (error) {
      o.onError(error, incoming.request());
      res.destroy(error instanceof Error ? error : undefined);
    }
  };
  return Object.assign(guard, { options: o });
}
