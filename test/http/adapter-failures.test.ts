// What happens when a route behind an adapter fails: its writes through the ledger's transaction
// roll back, the key is released, and the retry runs the route again.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { it } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { idempotency, idempotencyOf } from '#oncely/http/express/index.js';
import { idempotentListener } from '#oncely/http/node/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-adapter-failures-');

async function listen(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const post = (url: string, key: string, body = '{"item":"tea"}') =>
  fetch(url, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    body,
  });

it("Express: a route that writes through the ledger's SQL and then fails rolls its write back; the retry runs again", async () => {
  const database = openSqliteDatabase(join(dir, 'express.db'));
  database.exec('CREATE TABLE orders (key TEXT PRIMARY KEY, item TEXT NOT NULL)');
  const store = createSqliteStore({ database });
  let failNext = true;
  const app = express();
  app.use(express.json());
  app.post(
    '/orders',
    idempotency({ ledger: createLedger({ store }), maxBodyBytes: 64, onError: () => {} }),
    async (req, res, next) => {
      try {
        const { sql, key } = idempotencyOf(req)!;
        await sql.run('INSERT INTO orders (key, item) VALUES ($1, $2)', [
          key,
          (req.body as { item: string }).item,
        ]);
        if (failNext) {
          failNext = false;
          throw new Error('card declined after the insert');
        }
        res.status(201).json({ ok: true });
      } catch (error) {
        next(error);
      }
    },
  );
  app.use(
    (_error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
      void res.status(502).json({ error: 'upstream' }),
  );
  const server = await listen(createServer(app));
  try {
    assert.equal((await post(`${server.url}/orders`, 'k-1')).status, 502);
    assert.equal(
      await store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM orders')!.n),
      0,
      'the insert rolled back with the 5xx',
    );
    assert.equal((await post(`${server.url}/orders`, 'k-1')).status, 201, 'the key was released');
    assert.equal(
      (await post(`${server.url}/orders`, 'k-1')).headers.get('idempotent-replayed'),
      'true',
    );
    assert.equal(
      await store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM orders')!.n),
      1,
    );
  } finally {
    await server.close();
    await store.close();
    database.close();
  }
});

it('node:http: a listener that throws is a 500 problem, and the retry runs it again; a body over the limit is 413', async () => {
  let throwNext = true;
  let runs = 0;
  const errors: unknown[] = [];
  const listener = idempotentListener(
    {
      ledger: createLedger({ store: createMemoryStore() }),
      maxBodyBytes: 64,
      onError: (e) => errors.push(e),
    },
    (_req, res) => {
      runs++;
      if (throwNext) {
        throwNext = false;
        throw new Error('listener bug');
      }
      res.writeHead(201).end('made');
    },
  );
  const server = await listen(createServer(listener));
  try {
    const failed = await post(server.url, 'k-1');
    assert.equal(failed.status, 500);
    assert.match(failed.headers.get('content-type') ?? '', /problem\+json/);
    assert.match(String(errors[0]), /listener bug/);
    const retried = await post(server.url, 'k-1');
    assert.equal(retried.status, 201);
    assert.equal(await retried.text(), 'made');
    assert.equal(runs, 2);
    assert.equal((await post(server.url, 'k-2', 'x'.repeat(65))).status, 413);
    assert.equal(runs, 2, 'a refused body never reaches the listener');
  } finally {
    await server.close();
  }
});

it('node:http: a client that goes away while the listener runs: its write rolls back, nothing is left unhandled, and the retry runs again', {
  timeout: 20_000,
}, async () => {
  const database = openSqliteDatabase(join(dir, 'gone.db'));
  database.exec('CREATE TABLE orders (key TEXT PRIMARY KEY)');
  const store = createSqliteStore({ database });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let release: (() => void) | undefined;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const listener = idempotentListener(
    { ledger: createLedger({ store }), onError: () => {} },
    async (req, res) => {
      const { sql, key } = idempotencyOf(req)!;
      await sql.run('INSERT INTO orders (key) VALUES ($1)', [key]);
      const first = release === undefined; // only the first run waits to be released
      if (first) {
        started();
        await new Promise<void>((resolve) => (release = resolve));
      }
      res.writeHead(201).end('made');
      if (first) finished();
    },
  );
  const http = createServer(listener);
  const serverSides: Socket[] = [];
  http.on('connection', (socket: Socket) => void serverSides.push(socket));
  const server = await listen(http);
  try {
    const { port } = new URL(server.url);
    const gone = request({ port, method: 'POST', headers: { 'idempotency-key': 'k-gone' } });
    gone.on('error', () => {});
    gone.end('{}');
    await running;
    gone.destroy(); // the client goes away while the listener is mid-effect
    const [serverSide] = serverSides;
    if (!serverSide!.destroyed) await new Promise((resolve) => serverSide!.once('close', resolve));
    // The effect resumes later, after other I/O (as a database answer would).
    await new Promise((resolve) => setImmediate(resolve));
    release!();
    await done;
    // Rejections are reported once the microtasks drain: let them.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], 'no rejection was left unhandled');
    assert.equal(
      await store.read((tx) => tx.get<{ n: number }>('SELECT count(*) AS n FROM orders')!.n),
      0,
      'the write of an answer nobody received rolled back',
    );
    const retried = await post(server.url, 'k-gone');
    assert.equal(retried.status, 201, 'the key was released: the retry ran the listener again');
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await server.close();
    await store.close();
    database.close();
  }
});
