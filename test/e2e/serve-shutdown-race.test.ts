// 100 submissions racing a SIGTERM, each on its own connection: every one is answered, 201 or
// 503 (+ Retry-After, Connection: close), never a reset; the rows written are exactly the 201s.
// The connections are open before the signal; half the requests are written before it and half
// right after, so some run, some arrive during the drain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { openSqliteDatabase } from '../../src/stores/sqlite/index.js';
import { DROPBOX_TABLE } from '../../src/services/dropbox/dropbox-table.js';
import { parseResponse } from '../server/hostile/hostile-harness.js';
import { startServeProcess } from './serve-process.js';

const REQUESTS = 100;

test(`${REQUESTS} submissions racing a SIGTERM: each a 201 or a 503, never a reset; rows equal the 201s`, async (t) => {
  const serve = await startServeProcess(['--quiet']);
  try {
    const sockets = await Promise.all(
      Array.from({ length: REQUESTS }, () => new Promise<Socket>((resolve, reject) => {
        const socket = connect(serve.port, '127.0.0.1', () => resolve(socket));
        socket.once('error', reject);
      })),
    );
    const answers = sockets.map(
      (socket) =>
        new Promise<{ status: number; headers: Record<string, string | string[] | undefined> } | { error: string }>((resolve) => {
          const chunks: Buffer[] = [];
          socket.on('data', (chunk: Buffer) => chunks.push(chunk));
          socket.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
          socket.on('close', () => {
            try {
              resolve(parseResponse(Buffer.concat(chunks)));
            } catch (error) {
              resolve({ error: error instanceof Error ? error.message : String(error) });
            }
          });
        }),
    );
    const body = (i: number): string => JSON.stringify({ student: `s${i}`, assignment: 'lab3' });
    const write = (i: number): void =>
      void sockets[i]!.write(
        `POST /dropbox/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${serve.token}\r\nIdempotency-Key: race-${i}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body(i))}\r\nConnection: close\r\n\r\n${body(i)}`,
      );
    for (let i = 0; i < REQUESTS / 2; i++) write(i);
    serve.child.kill('SIGTERM');
    for (let i = REQUESTS / 2; i < REQUESTS; i++) write(i);

    const results = await Promise.all(answers);
    const failures = results.filter((r) => 'error' in r);
    assert.deepEqual(failures, [], 'every request is answered');
    const statuses = results.map((r) => ('status' in r ? r.status : 0));
    assert.deepEqual([...new Set(statuses)].filter((s) => s !== 201 && s !== 503), [], `statuses: ${statuses.join(' ')}`);
    for (const r of results) {
      if ('status' in r && r.status === 503) {
        assert.equal(r.headers['retry-after'], '1');
        assert.equal(r.headers['connection'], 'close');
      }
    }
    assert.equal(await serve.exited, 0, serve.stderr());
    t.diagnostic(`${statuses.filter((s) => s === 201).length} answered 201, ${statuses.filter((s) => s === 503).length} answered 503`);

    const db = openSqliteDatabase(join(serve.dataDir, 'oncely.db'));
    try {
      const { count } = db.prepare(`SELECT count(*) AS count FROM ${DROPBOX_TABLE}`).get() as { count: number };
      assert.equal(count, statuses.filter((s) => s === 201).length, `rows ${count}, 201s ${statuses.filter((s) => s === 201).length}, 503s ${statuses.filter((s) => s === 503).length}`);
    } finally {
      db.close();
    }
  } finally {
    await serve.cleanUp();
  }
});
