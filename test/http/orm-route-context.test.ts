import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { Transaction } from 'kysely';
import { captureRawBody, idempotency, idempotencyOf } from '#oncely/http/express/index.js';
import {
  fastifyIdempotency,
  idempotencyOf as fastifyIdempotencyOf,
} from '#oncely/http/fastify/index.js';
import { idempotency as honoIdempotency } from '#oncely/http/hono/index.js';
import { createIdempotencyMiddleware, withIdempotency } from '#oncely/http/index.js';
import { createLedger, type Ledger } from '#oncely/ledger/index.js';
import { createOrmLedgerStore } from '#oncely/stores/orm/index.js';
import { openOrmBackend, sqliteTarget, type OrmBackend } from '../support/orm-backends.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * Every framework adapter hands the route the ORM's own transaction (Kysely's, here): the order
 * written with it commits with the receipt, a replay does not write again, a failure writes
 * nothing. `Tx` is Kysely's `Transaction<Effects>` where the adapter types it from the ledger.
 */
interface Effects {
  effects: { id: string; n: number };
}
type Tx = Transaction<Effects>;

const dir = tempDir('oncely-orm-route-');
let n = 0;

/** One app per adapter: POST /orders writes one effect row named after the key, or fails. */
type Post = (key: string, body: string) => Promise<Response>;
type AppStart = (ledger: Ledger<Tx>) => Promise<{ post: Post; close(): Promise<void> }>;

const write = async (tx: Tx, key: string, body: string): Promise<void> => {
  await tx.insertInto('effects').values({ id: key, n: 1 }).execute();
  if (body.includes('fail')) throw new Error('payment refused after the insert');
};

const request = (url: string, key: string, body: string) =>
  new Request(url, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    body,
  });

const APPS: Record<string, AppStart> = {
  async fetch(ledger) {
    const handler = withIdempotency(
      createIdempotencyMiddleware({ ledger, scopeOf: () => 'alice', onError: () => {} }),
      async (req, context) => {
        await write(context!.tx, context!.key, await req.text());
        return new Response('made', { status: 201 });
      },
    );
    return {
      post: (key, body) => handler(request('http://shop.test/orders', key, body)),
      close: async () => {},
    };
  },
  async hono(ledger) {
    const app = new Hono();
    app.onError((_e, c) => c.text('failed', 500));
    app.post('/orders', honoIdempotency({ ledger, scopeOf: () => 'alice' }), async (c) => {
      const context = c.get('idempotency')!;
      await write(context.tx, context.key, await c.req.text());
      return c.text('made', 201);
    });
    return {
      post: async (key, body) => app.fetch(request('http://shop.test/orders', key, body)),
      close: async () => {},
    };
  },
  async express(ledger) {
    const app = express();
    app.use(express.json({ verify: captureRawBody }));
    app.post('/orders', idempotency({ ledger, scopeOf: () => 'alice' }), async (req, res, next) => {
      try {
        const { tx, key } = idempotencyOf(req, ledger)!; // typed: Transaction<Effects>
        await write(tx, key, JSON.stringify(req.body));
        res.status(201).send('made');
      } catch (error) {
        next(error);
      }
    });
    app.use(
      (_e: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        res.status(500).send('failed');
      },
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
    return {
      post: (key, body) => fetch(request(url, key, body)),
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  },
  async fastify(ledger) {
    const app = Fastify();
    await app.register(fastifyIdempotency({ ledger, scopeOf: () => 'alice' }));
    app.post('/orders', async (req, reply) => {
      const context = fastifyIdempotencyOf(req, ledger)!; // typed: Transaction<Effects>
      assert.equal(context, req.idempotency);
      await write(context.tx, context.key, JSON.stringify(req.body));
      return reply.code(201).send('made');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/orders`;
    return { post: (key, body) => fetch(request(url, key, body)), close: () => app.close() };
  },
};

describe("the route's ORM transaction on every adapter", () => {
  for (const [name, start] of Object.entries(APPS)) {
    it(`${name}: the order commits with the receipt, a replay writes nothing, a failure nothing`, async () => {
      const backend: OrmBackend = await openOrmBackend('kysely', sqliteTarget(dir, `route-${++n}`));
      const store = createOrmLedgerStore({ executor: backend.executor });
      const ledger = createLedger({ store }) as unknown as Ledger<Tx>;
      const app = await start(ledger);
      try {
        assert.equal((await app.post('k-1', '{"item":"tea"}')).status, 201);
        const replay = await app.post('k-1', '{"item":"tea"}');
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.equal((await app.post('k-2', '{"item":"fail"}')).status, 500);
        assert.deepEqual((await backend.effectIds()).sort(), ['k-1']);
        assert.equal((await ledger.lookup('alice', 'k-2')).kind, 'never_seen');
      } finally {
        await app.close();
        await backend.close();
      }
    });
  }
});
