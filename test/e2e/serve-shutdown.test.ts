// SIGTERM while a request is in flight: the request completes, then the process exits 0.
// The request is held in flight by its own body: headers first (with Expect: 100-continue, so the
// server's "100 Continue" proves it has the request), then SIGTERM, then the body. No sleeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { CLI } from '../support/repo-path.js';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServeProcess } from './serve-process.js';

const run = promisify(execFile);
const BODY = '{"student":"achen","assignment":"lab3"}';

test('SIGTERM with a request in flight: it completes with 201, then the process exits 0', async () => {
  const serve = await startServeProcess();
  try {
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: serve.port,
          method: 'POST',
          path: '/dropbox/submissions',
          agent: false,
          headers: {
            authorization: `Bearer ${serve.token}`,
            'idempotency-key': 'in-flight-1',
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(BODY)),
            expect: '100-continue',
          },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.on('continue', () => {
        serve.child.kill('SIGTERM');
        serve.waitForStderr('shutting down; 1 request in flight').then(() => req.end(BODY), reject);
      });
      req.flushHeaders();
    });
    const { status, body } = await answer;
    assert.equal(status, 201, body);
    assert.equal((JSON.parse(body) as { writes: number }).writes, 1);
    assert.equal(await serve.exited, 0);
    assert.match(serve.stderr(), /oncely serve: stopped\n/);
    await assert.rejects(fetch(`${serve.url}/healthz`), /fetch failed/);
  } finally {
    await serve.cleanUp();
  }
});

test('one-line errors: a bad port (usage, exit 2), a port in use and an unreachable database (exit 1)', async () => {
  const fail = async (args: string[]): Promise<{ code: number; stderr: string }> => {
    try {
      await run(process.execPath, [CLI, 'serve', ...args]);
      return { code: 0, stderr: '' };
    } catch (error) {
      const e = error as { code: number; stderr: string };
      return { code: e.code, stderr: e.stderr };
    }
  };
  const badPort = await fail(['--port', '70000']);
  assert.equal(badPort.code, 2);
  assert.equal(
    badPort.stderr,
    'oncely: invalid option --port: got "70000", expected an integer from 0 to 65535 (0 picks a free port)\n',
  );

  const serve = await startServeProcess();
  try {
    const dataDir = await mkdtemp(join(tmpdir(), 'oncely-e2e-'));
    const inUse = await fail(['--port', String(serve.port), '--data-dir', dataDir]).finally(() =>
      rm(dataDir, { recursive: true, force: true }),
    );
    assert.equal(inUse.code, 1);
    assert.match(inUse.stderr, /^oncely: port \d+ on 127\.0\.0\.1 is in use; .*--port.*\n$/);
  } finally {
    await serve.cleanUp();
  }

  const noDb = await fail(['--port', '0', '--db', 'postgres://postgres@127.0.0.1:1/test']);
  assert.equal(noDb.code, 1);
  assert.match(
    noDb.stderr,
    /^oncely: cannot open the postgres store at postgres:\/\/postgres@127\.0\.0\.1:1\/test: .*ECONNREFUSED.*\n$/,
  );
});
