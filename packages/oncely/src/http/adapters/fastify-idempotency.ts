import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { createIdempotencyMiddleware, type IdempotencyContext } from '../idempotency-middleware.js';
import { webOptions, type AdapterOptions } from './adapter-options.js';
import { parsedBodyBytes } from './parsed-body-bytes.js';
import { setRouteContext } from './route-context.js';

export type FastifyIdempotencyOptions<Tx> = AdapterOptions<Tx, FastifyRequest>;

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set by oncely's plugin on a guarded request: scope, key, `sql`, `tx`, `claim.tookOver`.
     * One declaration serves every plugin of the app, so `tx` is `unknown` here:
     * `idempotencyOf(request, ledger)` gives the same context, `tx` typed by the ledger's store.
     */
    idempotency?: IdempotencyContext<unknown> | undefined;
  }
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A guarded request between its preHandler and its onSend: the route's answer is awaited. */
interface Pending {
  readonly captured: Deferred<Response>;
  readonly answer: Promise<Response>;
}

const PASSED_THROUGH = new Response(null, { status: 299 });

/**
 * Fastify plugin with the Express middleware's behaviour, around unchanged route handlers:
 *
 * ```ts
 * await app.register(fastifyIdempotency({ ledger, scopeOf: (request) => request.user?.id }));
 * app.post('/orders', async (request, reply) => reply.code(201).send(createOrder(request.body)));
 * ```
 * In `preHandler` (after Fastify parsed the body) the ledger decides: a replay, a conflict, a
 * duplicate in flight or a refusal is answered there and the handler never runs. For a new key
 * the handler runs inside the ledger's transaction (`request.idempotency.sql`), and in `onSend`
 * its status, headers and serialised payload become the receipt. The fingerprint is taken from
 * `request.rawBody` when a raw-body plugin keeps it, else from the parsed body canonicalised.
 * The plugin is not encapsulated: it guards every route of the instance it is registered on.
 */
export function fastifyIdempotency<Tx>(options: FastifyIdempotencyOptions<Tx>): FastifyPluginAsync {
  const origins = new WeakMap<Request, FastifyRequest>();
  const middleware = createIdempotencyMiddleware<Tx>(webOptions(options, origins));
  const { methodSet } = middleware.options;
  const pending = new WeakMap<FastifyRequest, Pending>();

  const plugin: FastifyPluginAsync = async (fastify) => {
    fastify.decorateRequest('idempotency', undefined);

    fastify.addHook('preHandler', async (request, reply) => {
      if (!methodSet.has(request.method.toUpperCase())) return;
      const raw = (request as { rawBody?: unknown }).rawBody;
      const bytes = parsedBodyBytes(raw, request.body, true) ?? new Uint8Array(0);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (value === undefined || name === 'content-length' || name === 'transfer-encoding')
          continue;
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
      }
      const web = new Request(`${request.protocol}://${request.host}${request.url}`, {
        method: request.method,
        headers,
        body: bytes.byteLength === 0 ? null : new Uint8Array(bytes),
      });
      origins.set(web, request);
      const proceed = deferred<IdempotencyContext<Tx> | undefined>();
      const captured = deferred<Response>();
      const answer = middleware(web, async (_forwarded, context) => {
        proceed.resolve(context);
        return context === undefined ? PASSED_THROUGH : captured.promise;
      });
      const first = await Promise.race([
        proceed.promise.then((context) => ({ context })),
        answer.then((response) => ({ response })),
      ]);
      if ('response' in first) {
        if (first.response === PASSED_THROUGH) return;
        await sendResponse(reply, first.response);
        return reply;
      }
      if (first.context === undefined) return; // passed through: the handler answers as usual
      request.idempotency = first.context as IdempotencyContext<unknown>;
      setRouteContext(request, request.idempotency);
      pending.set(request, { captured, answer });
    });

    fastify.addHook('onSend', async (request, reply, payload) => {
      const guarded = pending.get(request);
      if (guarded === undefined) return payload;
      pending.delete(request);
      const status = reply.statusCode;
      guarded.captured.resolve(
        new Response(await payloadBytes(payload, status), { status, headers: replyHeaders(reply) }),
      );
      const answer = await guarded.answer;
      if (answer.status !== status)
        for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
      setHeaders(reply, answer);
      reply.code(answer.status);
      return Buffer.from(await answer.arrayBuffer());
    });

    // A request that ends without onSend (the client went away) must not hold its transaction.
    const abandon = async (request: FastifyRequest): Promise<void> => {
      const guarded = pending.get(request);
      if (guarded === undefined) return;
      pending.delete(request);
      guarded.captured.reject(new Error('the request ended before the route answered'));
      await guarded.answer.catch(() => {});
    };
    fastify.addHook('onRequestAbort', abandon);
    fastify.addHook('onResponse', abandon);
  };
  // fastify-plugin's marker: the hooks apply to the routes of the instance that registers it.
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
  return plugin;
}

async function sendResponse(reply: FastifyReply, response: Response): Promise<void> {
  setHeaders(reply, response);
  await reply.code(response.status).send(Buffer.from(await response.arrayBuffer()));
}

function setHeaders(reply: FastifyReply, response: Response): void {
  for (const [name, value] of response.headers)
    if (name !== 'set-cookie' && name !== 'content-length') reply.header(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) reply.header('set-cookie', cookies);
}

function replyHeaders(reply: FastifyReply): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return headers;
}

/** What the handler sent, as bytes: Fastify has serialised it to a string or Buffer (or a stream). */
async function payloadBytes(
  payload: unknown,
  status: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (status === 204 || status === 304 || payload === null || payload === undefined) return null;
  if (typeof payload === 'string') return new TextEncoder().encode(payload);
  if (payload instanceof Uint8Array) return new Uint8Array(payload);
  const chunks: Buffer[] = [];
  for await (const chunk of payload as AsyncIterable<Buffer | string>)
    chunks.push(Buffer.from(chunk));
  return new Uint8Array(Buffer.concat(chunks));
}
