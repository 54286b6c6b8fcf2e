import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { idempotency, idempotencyOf } from '#oncely/http/express/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-sub-app-');

describe('Express: a route in a sub-app mounted after the middleware', () => {
  it('is not stored, rolls back, says why, and holds nothing: the next requests go on', async () => {
    const store = createSqliteStore({
      database: () => openSqliteDatabase(join(dir, 'sub.db')),
      durability: 'process',
    });
    await store.write((tx) => tx.exec('CREATE TABLE orders (key TEXT NOT NULL)'));
    const errors: unknown[] = [];
    const app = express();
    const sub = express(); // entering it gives the response the sub-app's prototype
    sub.post('/orders', async (req, res) => {
      const { sql, key } = idempotencyOf(req)!;
      await sql.run('INSERT INTO orders (key) VALUES ($1)', [key]);
      res.status(201).json({ key });
    });
    app.use(express.json());
    app.use(idempotency({ ledger: createLedger({ store }), onError: (e) => errors.push(e) }));
    app.use('/api', sub);
    const server: Server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/orders`;
    const post = (key: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: '{}',
        signal: AbortSignal.timeout(5_000),
      });
    try {
      assert.equal((await post('a')).status, 201, "the route's own answer, past the capture");
      // Not left in flight, and the writer is free: the same key runs again, another key runs.
      assert.equal((await post('a')).status, 201);
      assert.equal((await post('b')).status, 201);
      const named = errors.filter((e) => (e as Error).name === 'AnsweredPastCaptureError');
      assert.equal(named.length, 3, 'each request says why');
      assert.match((named[0] as Error).message, /mount idempotency\(\) in the Express app/);
      const rows = await store.read((tx) =>
        tx.get<{ n: number }>('SELECT count(*) AS n FROM orders'),
      );
      assert.equal(rows?.n, 0, 'nothing written past the capture is kept');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    }
  });
});
