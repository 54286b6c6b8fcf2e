import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { InvalidOptionError } from '../../contract/errors.js';
import {
  createIdempotencyGuard,
  type GuardAnswer,
  type IdempotencyContext,
} from '../idempotency-guard.js';
import { resolveIdempotencyOptions, SINGLE_TENANT_SCOPE } from '../idempotency-options.js';
import { rawHeaderValues } from '../node-listener.js';
import type { AnswerBytes } from '../receipt-response.js';
import { readRequestTarget } from '../request-target.js';
import type { AdapterOptions } from './adapter-options.js';
import {
  CaptureFailure,
  captureNodeResponse,
  type CapturedResponse,
} from './capture-node-response.js';
import { NodeIncoming } from './node-incoming.js';
import { writeAnswer, writeOwnAnswer } from './write-answer.js';

/** How the guard continues the framework's handling of one request. */
export interface NestRoute<Tx> {
  /** The route runs: in the ledger's transaction with a context, outside it without one. */
  run(context: IdempotencyContext<Tx> | undefined): void;
  /** The ledger answered for the route: the framework finishes without it. */
  skip(): void;
  /** Whether the route threw (the framework's exception filters answered for it). */
  threw(): boolean;
  /** The route writes its own answer (a Nest `@Res()` route): a skipped one gets no write at all. */
  readonly answersItself: boolean;
}

/** One request as the framework holds it, and the node request and response under it. */
export interface NestExchange<Req> {
  /** The framework's request (Express `req`, Fastify `request`): what `scopeOf` is given. */
  readonly request: Req;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly path: string;
  /** The body as the framework's parser left it, or undefined to read it from `req`. */
  readonly body: Uint8Array | undefined;
  /** Headers the framework keeps apart from `res` until it writes (Fastify's reply's). */
  readonly heldHeaders: OutgoingHttpHeaders | undefined;
}

export type NestGuard<Tx, Req> = (
  exchange: NestExchange<Req>,
  route: NestRoute<Tx>,
) => Promise<void>;

/** The route threw: thrown into the ledger, which rolls the writes back and frees the key. */
class RouteThrew {}

/** The answer that means "the route answered outside the ledger": nothing left to write. */
const PASSED_THROUGH = new Response(null, { status: 299 });

/**
 * The guard of a framework that writes the answer itself, after its handler chain (NestJS): the
 * decision of createIdempotencyGuard and the capture of the node response, as in the Express
 * adapter, in another order. Everything the framework writes from here on is captured first:
 * - a new key: the route runs in the ledger's transaction, and what the framework writes for it
 *   (the value serialised, or an exception filter's answer to a throw) is its answer. A throw or
 *   a 5xx rolls the writes back and is passed on unstored; any other answer commits as the receipt.
 * - a replay or a refusal: the route does not run, but the framework still finishes the request
 *   and writes (a body of nothing) into the capture, which is dropped; then the ledger's answer
 *   goes out. Writing it first would make the framework's write fail on a sent response.
 */
export function createNestGuard<Tx, Req>(options: AdapterOptions<Tx, Req>): NestGuard<Tx, Req> {
  const { scopeOf, ...rest } = options;
  if (scopeOf !== undefined && typeof scopeOf !== 'function')
    throw new InvalidOptionError(
      'scopeOf',
      scopeOf,
      "a function (the framework's request) => scope | undefined",
    );
  const o = resolveIdempotencyOptions<Tx>(rest, scopeOf !== undefined);
  const keptHeaders = [...o.receiptHeaderSet].sort();
  const requests = new WeakMap<NodeIncoming<IncomingMessage>, Req>();
  const idempotencyGuard = createIdempotencyGuard<Tx, unknown, NodeIncoming<IncomingMessage>>(
    // A route's throw is reported by the framework's exception filters, not again here.
    {
      ...o,
      onError: (error, request) => {
        if (!(error instanceof RouteThrew)) o.onError(error, request);
      },
    },
    scopeOf === undefined
      ? () => SINGLE_TENANT_SCOPE
      : (incoming) => scopeOf(requests.get(incoming) as Req),
  );

  /** The ledger's decision, with the route run inside it when it is to run. */
  const decide = async (
    exchange: NestExchange<Req>,
    route: NestRoute<Tx>,
    capture: CapturedResponse,
    incoming: NodeIncoming<IncomingMessage>,
  ): Promise<{ answer: GuardAnswer; ran: boolean; thrown?: AnswerBytes }> => {
    const state: { ran: boolean; thrown?: AnswerBytes } = { ran: false };
    requests.set(incoming, exchange.request);
    const answer = await idempotencyGuard(incoming, async (_incoming, context) => {
      if (context === undefined) {
        capture.restore(true);
        route.run(undefined);
        return PASSED_THROUGH;
      }
      state.ran = true;
      route.run(context);
      const answered = await capture.done;
      if (answered instanceof CaptureFailure) throw answered.error;
      if (!route.threw()) return answered;
      state.thrown = answered;
      throw new RouteThrew();
    });
    return { answer, ...state };
  };

  const guard = async (exchange: NestExchange<Req>, route: NestRoute<Tx>): Promise<void> => {
    const { req, res } = exchange;
    if (!o.methodSet.has((req.method ?? 'GET').toUpperCase())) {
      route.run(undefined);
      return;
    }
    const capture = captureNodeResponse(res, keptHeaders);
    const target = readRequestTarget({
      method: req.method ?? 'GET',
      target: exchange.path,
      hosts: rawHeaderValues(req.rawHeaders, 'host'),
      httpVersion: req.httpVersion,
      encrypted: (req.socket as { encrypted?: boolean }).encrypted === true,
    });
    if (target.kind === 'refused') {
      await answerInstead(exchange, route, capture, target.response);
      return;
    }
    const incoming = new NodeIncoming(req, res, target, exchange.body);
    // A client gone (or an answer written past the capture) ends the wait for the framework's write.
    incoming.onClose((finished) =>
      capture.fail(
        new Error(
          finished
            ? "the answer went out without passing oncely's capture"
            : 'the client went away before the route answered',
        ),
      ),
    );
    const { answer, ran, thrown } = await decide(exchange, route, capture, incoming);
    if (answer === PASSED_THROUGH) return;
    if (!ran) {
      await answerInstead(exchange, route, capture, answer);
      return;
    }
    try {
      await answerAfterRoute(res, capture, answer, thrown);
    } catch (error) {
      o.onError(error, incoming.request());
      res.destroy(error instanceof Error ? error : undefined);
    }
  };
  return guard;
}

/**
 * The answer to a request whose route ran: its own (or its exception filter's, `thrown`) as the
 * route set it, headers on `res`; else the guard's (a commit that failed, a lost lease).
 */
async function answerAfterRoute(
  res: ServerResponse,
  capture: CapturedResponse,
  answer: GuardAnswer,
  thrown: AnswerBytes | undefined,
): Promise<void> {
  if (res.writableEnded || res.destroyed) {
    capture.restore(true); // answered past the capture, or the client left: reported already
    return;
  }
  const first = !(answer instanceof Response) && answer.kind === 'first';
  const own = thrown ?? (first ? answer.receipt : undefined);
  capture.restore(own !== undefined);
  if (own !== undefined) writeOwnAnswer(own, res);
  else await writeAnswer(answer, res);
}

/**
 * The ledger answered for the route (a replay, a refusal): the framework finishes the request
 * without it and writes into the capture, which is dropped; the ledger's answer goes out instead,
 * with the headers set before the route (CORS, say), as on Express.
 */
async function answerInstead<Tx, Req>(
  exchange: NestExchange<Req>,
  route: NestRoute<Tx>,
  capture: CapturedResponse,
  answer: GuardAnswer,
): Promise<void> {
  const { res } = exchange;
  route.skip();
  if (!route.answersItself) await capture.done;
  capture.restore(false);
  if (res.writableEnded || res.destroyed) return;
  for (const [name, value] of Object.entries(exchange.heldHeaders ?? {}))
    if (value !== undefined && !res.hasHeader(name)) res.setHeader(name, value);
  await writeAnswer(answer, res);
}
