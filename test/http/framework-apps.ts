// The same small orders app in six frameworks (NestJS on two platforms: nest-apps.ts), each
// written as its users write it: a body
// parser, a passport-style authentication step that sets the user, and an unchanged route.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { AdapterOptions } from '#oncely/http/adapters/adapter-options.js';
import { idempotency as expressIdempotency, idempotencyOf } from '#oncely/http/express/index.js';
import { fastifyIdempotency } from '#oncely/http/fastify/index.js';
import { idempotentHandler } from '#oncely/http/fetch/index.js';
import { idempotency as honoIdempotency } from '#oncely/http/hono/index.js';
import { toNodeListener } from '#oncely/http/node-listener.js';
import { idempotentListener } from '#oncely/http/node/index.js';
import type { RouteIdempotency } from '#oncely/http/adapters/adapter-options.js';
import { fetchBridge } from '../support/fetch-bridge.js';
import { nestApps } from './nest-apps.js';

/** The users the authentication step knows, by bearer token (what passport's strategy would look up). */
/** A request after the authentication step (passport's `req.user`). */
type WithUser = { user?: { id: string } | undefined };

const USERS: Record<string, { id: string }> = {
  'token-alice': { id: 'alice' },
  'token-bob': { id: 'bob' },
};
const userOf = (authorization: string | undefined): { id: string } | undefined =>
  USERS[/^Bearer (\S+)$/.exec(authorization ?? '')?.[1] ?? ''];

/** What every app's route does, counted so a test sees whether it ran. */
export interface OrderBook {
  runs: number;
  /** Make the next run answer 500 (a failure the ledger must not store). */
  failNext: boolean;
  /** Keys the route saw in its context, in order. */
  keys: Array<string | undefined>;
  /** The `value` of `validate` the route saw in its context, in order. */
  values: unknown[];
  /** Charge the card in a step first (the ledger needs a step store), before failNext. */
  stepped?: boolean;
  /** The step keys the payment service was called with, one per charge call. */
  charges?: string[];
}

async function placeOrder(
  book: OrderBook,
  user: string,
  body: { item?: unknown; qty?: unknown },
  context: RouteIdempotency<unknown> | undefined,
): Promise<{ status: number; json: object; id: string }> {
  book.runs++;
  book.keys.push(context?.key);
  book.values.push(context?.value);
  // A call to another service, as a recovery point: a retry after the 500 below skips it.
  const charge =
    book.stepped === true && context !== undefined
      ? await context.step('charge', ({ key }) => {
          const charges = (book.charges ??= []);
          charges.push(key);
          return `ch-${charges.length}`;
        })
      : undefined;
  if (book.failNext) {
    book.failNext = false;
    return { status: 500, json: { error: 'payment service down' }, id: '' };
  }
  const id = `order-${book.runs}`;
  const json = { id, user, item: body.item, qty: body.qty };
  return { status: 201, json: charge === undefined ? json : { ...json, charge }, id };
}

export interface RunningApp {
  readonly url: string;
  readonly book: OrderBook;
  close(): Promise<void>;
}

export type Options = AdapterOptions<unknown, never>;

export interface FrameworkApp {
  readonly name: string;
  start(options: Omit<Options, 'scopeOf'>, scoped: boolean): Promise<RunningApp>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function running(server: Server, url: string, book: OrderBook): RunningApp {
  return { url, book, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const newBook = (): OrderBook => ({
  runs: 0,
  failNext: false,
  keys: [],
  values: [],
});

export const FRAMEWORK_APPS: readonly FrameworkApp[] = [
  {
    name: 'Express',
    async start(options, scoped) {
      const book = newBook();
      const app = express();
      app.use(express.json());
      app.use((req, _res, next) => {
        (req as WithUser).user = userOf(req.headers.authorization); // passport would set req.user
        next();
      });
      const guard = expressIdempotency<unknown>({
        ...options,
        ...(scoped ? { scopeOf: (req) => (req as WithUser).user?.id } : {}),
      });
      // The route as it was before oncely: (req, res, next), req.body parsed, res.status().json().
      app.post('/orders', guard, async (req, res) => {
        const user = (req as WithUser).user?.id ?? 'anonymous';
        const order = await placeOrder(book, user, req.body as object, idempotencyOf(req));
        res.status(order.status).set('x-order-id', order.id).json(order.json);
      });
      app.get('/orders', guard, (_req, res) => void res.json({ runs: book.runs }));
      const server = createServer(app);
      return running(server, await listen(server), book);
    },
  },
  {
    name: 'Fastify',
    async start(options, scoped) {
      const book = newBook();
      const app = Fastify();
      app.decorateRequest('user', undefined);
      app.addHook('onRequest', async (request) => {
        (request as WithUser).user = userOf(request.headers.authorization);
      });
      await app.register(
        fastifyIdempotency<unknown>({
          ...options,
          ...(scoped ? { scopeOf: (request) => (request as WithUser).user?.id } : {}),
        }),
      );
      app.post('/orders', async (request, reply) => {
        const user = (request as WithUser).user?.id ?? 'anonymous';
        const order = await placeOrder(book, user, request.body as object, request.idempotency);
        return reply.code(order.status).header('x-order-id', order.id).send(order.json);
      });
      app.get('/orders', async () => ({ runs: book.runs }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address() as AddressInfo;
      return { url: `http://127.0.0.1:${address.port}`, book, close: () => app.close() };
    },
  },
  {
    name: 'Hono',
    async start(options, scoped) {
      const book = newBook();
      const app = new Hono<{ Variables: { user: { id: string } | undefined } }>();
      app.use('*', async (c, next) => {
        c.set('user', userOf(c.req.header('authorization')));
        await next();
      });
      const guard = honoIdempotency<unknown>({
        ...options,
        ...(scoped ? { scopeOf: (c) => (c.get('user') as { id: string } | undefined)?.id } : {}),
      });
      app.post('/orders', guard, async (c) => {
        const order = await placeOrder(
          book,
          c.get('user')?.id ?? 'anonymous',
          await c.req.json(),
          c.get('idempotency' as never) as RouteIdempotency<unknown> | undefined,
        );
        return c.json(order.json, order.status as 201, { 'x-order-id': order.id });
      });
      app.get('/orders', guard, (c) => c.json({ runs: book.runs }));
      const server = createServer(toNodeListener((request) => app.fetch(request)));
      return running(server, await listen(server), book);
    },
  },
  {
    name: 'node:http',
    async start(options, scoped) {
      const book = newBook();
      // The listener as it was: reads the stream, parses JSON, writes with writeHead/end.
      const listener = (req: IncomingMessage, res: ServerResponse): void => {
        if (req.method === 'GET') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ runs: book.runs }));
          return;
        }
        let text = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (text += chunk));
        req.on('end', async () => {
          const user = (req as WithUser).user?.id ?? 'anonymous';
          const context = idempotencyOf(req);
          const order = await placeOrder(book, user, JSON.parse(text) as object, context);
          res
            .writeHead(order.status, { 'content-type': 'application/json', 'x-order-id': order.id })
            .end(JSON.stringify(order.json));
        });
      };
      const guarded = idempotentListener<unknown>(
        { ...options, ...(scoped ? { scopeOf: (req) => (req as WithUser).user?.id } : {}) },
        listener,
      );
      const server = createServer((req, res) => {
        (req as WithUser).user = userOf(req.headers.authorization);
        void guarded(req, res);
      });
      return running(server, await listen(server), book);
    },
  },
  {
    name: 'Fetch',
    async start(options, scoped) {
      const book = newBook();
      // A Fetch API handler as in a Next.js route or Deno.serve: the auth reads the request.
      const handler = idempotentHandler<unknown>(
        {
          ...options,
          ...(scoped
            ? { scopeOf: (request) => userOf(request.headers.get('authorization') ?? '')?.id }
            : {}),
        },
        async (request) => {
          if (request.method === 'GET') return Response.json({ runs: book.runs });
          const user = userOf(request.headers.get('authorization') ?? '')?.id ?? 'anonymous';
          const order = await placeOrder(book, user, await request.json(), idempotencyOf(request));
          return Response.json(order.json, {
            status: order.status,
            headers: { 'x-order-id': order.id },
          });
        },
      );
      const server = createServer(fetchBridge(handler));
      return running(server, await listen(server), book);
    },
  },
  ...nestApps(newBook, placeOrder, userOf),
];
