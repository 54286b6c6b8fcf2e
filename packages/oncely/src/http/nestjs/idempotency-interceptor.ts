import { IncomingMessage, ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { RESPONSE_PASSTHROUGH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { Observable, type Subscription } from 'rxjs';
import type { AdapterOptions } from '../adapters/adapter-options.js';
import { createNestGuard, type NestExchange, type NestGuard } from '../adapters/nest-guard.js';
import { parsedBodyBytes, rawBodyOf } from '../adapters/parsed-body-bytes.js';
import { setRouteContext } from '../adapters/route-context.js';
import type { IdempotencyContext } from '../idempotency-guard.js';
import { idempotentRouteOf, MODULE_DEFAULTS, type IdempotentRouteOptions } from './idempotent.js';

/** What a Nest HTTP platform hands a handler: Express's `req`/`res`, or Fastify's request and reply. */
interface PlatformRequest {
  readonly raw?: IncomingMessage;
  readonly originalUrl?: string;
  readonly url?: string;
  body?: unknown;
  readonly rawBody?: unknown;
}
interface PlatformResponse {
  readonly raw?: ServerResponse;
  getHeaders?(): OutgoingHttpHeaders;
}

/**
 * Guards the handlers marked `@Idempotent()`; `OncelyModule` installs it for every route. Why
 * here and how: an interceptor is the one place of Nest's pipeline that knows the handler (its
 * metadata) and wraps its run, after guards (so `scopeOf` sees `req.user`) and before pipes. But
 * Nest writes the answer after the interceptors, and its exception filters answer a throw there
 * too, so the answer a receipt must hold (status, headers, bytes as sent) exists only on the
 * response. So the node response under either platform (Express's `res`, Fastify's `reply.raw`)
 * is captured as in the Express adapter, and the guard (adapters/nest-guard.ts) writes the one
 * final answer once Nest has written into the capture: the route's own, a replay, or a refusal.
 */
export class IdempotencyInterceptor<Tx, Req> implements NestInterceptor {
  readonly #options: AdapterOptions<Tx, Req>;
  readonly #guards = new WeakMap<IdempotentRouteOptions, NestGuard<Tx, Req>>();
  readonly #answersItself = new WeakMap<object, boolean>();

  constructor(options: AdapterOptions<Tx, Req>) {
    this.#options = options;
    this.#guards.set(MODULE_DEFAULTS, createNestGuard(options)); // checks the options now
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const routeOptions = idempotentRouteOf(context.getHandler(), context.getClass());
    if (routeOptions === undefined) return next.handle();
    const guard = this.#guardFor(routeOptions);
    const http = context.switchToHttp();
    const request = http.getRequest<PlatformRequest>();
    // A method the guard does not take (GET on a marked controller) it runs as is.
    const exchange = exchangeOf<Req>(request, http.getResponse<PlatformResponse>());
    const answersItself = this.#routeAnswersItself(context);
    return new Observable((subscriber) => {
      let threw = false;
      let inner: Subscription | undefined;
      const run = (idempotency: IdempotencyContext<Tx> | undefined): void => {
        if (idempotency !== undefined) {
          setRouteContext(request, idempotency as IdempotencyContext<unknown>);
          // Read by the guard, as express.raw() would: no parser of Nest's took this body.
          if (exchange.body === undefined) request.body = Buffer.from(idempotency.body);
        }
        inner = next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            threw = true;
            subscriber.error(error);
          },
          complete: () => subscriber.complete(),
        });
      };
      const skip = (): void => {
        subscriber.next(undefined); // Nest writes this into the capture; it is dropped
        subscriber.complete();
      };
      guard(exchange, { run, skip, threw: () => threw, answersItself }).catch((error: unknown) =>
        subscriber.error(error),
      );
      return () => inner?.unsubscribe();
    });
  }

  #guardFor(routeOptions: IdempotentRouteOptions): NestGuard<Tx, Req> {
    let guard = this.#guards.get(routeOptions);
    if (guard === undefined) {
      // The module's own guard has said whatever there was to warn of, once.
      guard = createNestGuard({ ...this.#options, ...routeOptions, onWarning: () => {} });
      this.#guards.set(routeOptions, guard);
    }
    return guard;
  }

  /**
   * Whether the handler takes the response with `@Res()` (or `@Next()`) and no passthrough: then
   * Nest writes nothing after it, and a replay must not wait for Nest's write. Nest's own test
   * (RouterExecutionContext.isResponseHandled), on the metadata its decorators leave.
   */
  #routeAnswersItself(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let answers = this.#answersItself.get(handler);
    if (answers === undefined) {
      const host = context.getClass();
      const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, host, handler.name) as
        | object
        | undefined;
      const takesResponse = Object.keys(args ?? {}).some(
        (key) =>
          key.startsWith(`${RouteParamtypes.RESPONSE}:`) ||
          key.startsWith(`${RouteParamtypes.NEXT}:`),
      );
      answers =
        takesResponse &&
        Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, host, handler.name) !== true;
      this.#answersItself.set(handler, answers);
    }
    return answers;
  }
}

/** The node request and response under either platform's, and the body its parser left. */
function exchangeOf<Req>(request: PlatformRequest, response: PlatformResponse): NestExchange<Req> {
  const req = request instanceof IncomingMessage ? request : request.raw!;
  const res = response instanceof ServerResponse ? response : response.raw!;
  // Fastify has parsed the body (or refused it) before any handler; Express, only with a parser.
  const consumed = req !== request || req.readableEnded || request.body !== undefined;
  return {
    request: request as Req,
    req,
    res,
    path: request.originalUrl ?? request.url ?? req.url ?? '/',
    body: parsedBodyBytes(rawBodyOf(request), request.body, consumed),
    // Fastify keeps a reply's headers apart from the node response until it writes.
    heldHeaders: response instanceof ServerResponse ? undefined : response.getHeaders?.(),
  };
}
