import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import express, { type RequestHandler } from 'express';
import { captureRawBody, idempotency } from '#oncely/http/express/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';

/** An Express app with `parser` in front of the middleware and a route that echoes what it got. */
async function appWith(
  parser: RequestHandler | undefined,
): Promise<{ post(key: string, body: string): Promise<Response>; close(): Promise<void> }> {
  const app = express();
  if (parser) app.use(parser);
  app.post(
    '/echo',
    idempotency({ ledger: createLedger({ store: createMemoryStore() }) }),
    (req, res) => {
      const body: unknown = req.body;
      res
        .status(201)
        .json({ body: Buffer.isBuffer(body) ? `bytes:${body.toString('utf8')}` : body });
    },
  );
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
  return {
    post: (key, body) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body,
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('Express: where the fingerprint comes from', () => {
  it('after plain express.json(): the parsed body canonicalised, so a retry reformatted is still a replay', async () => {
    const app = await appWith(express.json());
    try {
      assert.equal((await app.post('k', '{"a":1,"b":[1,2]}')).status, 201);
      const reformatted = await app.post('k', '{ "b": [1, 2],\n  "a": 1 }');
      assert.equal(reformatted.headers.get('idempotent-replayed'), 'true');
      assert.equal((await app.post('k', '{"a":2,"b":[1,2]}')).status, 422);
    } finally {
      await app.close();
    }
  });

  it('after express.json({ verify: captureRawBody }): the exact bytes, so a reformatted body is another payload', async () => {
    const app = await appWith(express.json({ verify: captureRawBody }));
    try {
      const first = await app.post('k', '{"a":1}');
      assert.deepEqual(
        await first.json(),
        { body: { a: 1 } },
        'the route still gets the parsed body',
      );
      assert.equal((await app.post('k', '{"a":1}')).headers.get('idempotent-replayed'), 'true');
      assert.equal((await app.post('k', '{ "a": 1 }')).status, 422);
    } finally {
      await app.close();
    }
  });

  it("after a verify hook of the app's own that keeps req.rawBody: those exact bytes", async () => {
    const keepRaw = (req: object, _res: unknown, buffer: Buffer): void => {
      (req as { rawBody?: Buffer }).rawBody = buffer;
    };
    const app = await appWith(express.json({ verify: keepRaw }));
    try {
      assert.equal((await app.post('k', '{"a":1}')).status, 201);
      assert.equal((await app.post('k', '{"a":1}')).headers.get('idempotent-replayed'), 'true');
      assert.equal((await app.post('k', '{ "a": 1 }')).status, 422, 'not canonicalised');
    } finally {
      await app.close();
    }
  });

  it('without a body parser: the middleware reads the body and hands it on as a Buffer, as express.raw() would', async () => {
    const app = await appWith(undefined);
    try {
      const first = await app.post('k', '{"a":1}');
      assert.equal(first.status, 201);
      assert.deepEqual(await first.json(), { body: 'bytes:{"a":1}' });
      assert.equal((await app.post('k', '{"a":1}')).headers.get('idempotent-replayed'), 'true');
    } finally {
      await app.close();
    }
  });
});
