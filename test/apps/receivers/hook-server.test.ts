import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { startHookServer } from '#cli/receivers/hook/hook-server.js';
import type { HookHit } from '#cli/receivers/hook/hook-service.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { CLI } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';

const MAIN = CLI;

test('over a real socket: the hit list at GET /debug/hits, reset at POST /debug/reset', async () => {
  const clock = new VirtualClock({ startAt: 1_000_000 });
  const hook = await startHookServer({ script: '503,201', clock });
  try {
    const a = await fetch(`${hook.url}/hooks/a`, {
      method: 'POST',
      body: 'one',
      headers: { 'Idempotency-Key': 'k' },
    });
    assert.equal(a.status, 503);
    const b = await fetch(`${hook.url}/hooks/a`, {
      method: 'POST',
      body: 'one',
      headers: { 'Idempotency-Key': 'k' },
    });
    assert.equal(b.status, 201);
    const listed = (await (await fetch(`${hook.url}/debug/hits`)).json()) as {
      arrivals: number;
      completions: number;
      hits: HookHit[];
    };
    assert.equal(listed.arrivals, 2);
    assert.equal(listed.completions, 1);
    assert.deepEqual(
      listed.hits.map((h) => [h.path, h.key, h.status]),
      [
        ['/hooks/a', 'k', 503],
        ['/hooks/a', 'k', 201],
      ],
    );
    assert.equal((await fetch(`${hook.url}/debug/reset`, { method: 'POST' })).status, 204);
    assert.equal((await hook.service.hits()).length, 0);
  } finally {
    await hook.close();
  }
});

test('swallow drops the TCP connection after recording the completion: the caller gets no status at all', async () => {
  const hook = await startHookServer({ script: 'swallow' });
  try {
    await assert.rejects(fetch(`${hook.url}/h`, { method: 'POST', body: 'x' }), (e: unknown) => {
      assert.ok(e instanceof TypeError);
      return true;
    });
    assert.deepEqual(await hook.service.counts(), { arrivals: 1, completions: 1, replays: 0 });
    assert.equal((await hook.service.hits())[0]?.answer, 'swallowed');
  } finally {
    await hook.close();
  }
});

test('over a real socket, a body over maxBodyBytes gets its 413 while the sender is still sending', {
  timeout: 10_000,
}, async () => {
  const hook = await startHookServer({ maxBodyBytes: 1024 });
  try {
    // The request body never ends: a receiver that read it in full before checking would never answer.
    const answer = await new Promise<{ status: number; type: string | undefined; body: string }>(
      (resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: hook.port,
            method: 'POST',
            path: '/hooks/big',
            agent: false,
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }),
            );
          },
        );
        req.on('error', reject);
        req.write(Buffer.alloc(64 * 1024, 0x78));
      },
    );
    assert.equal(answer.status, 413);
    assert.equal(answer.type, 'application/problem+json');
    assert.equal((JSON.parse(answer.body) as { status: number }).status, 413);
    assert.deepEqual(
      (await hook.service.hits()).map((h) => h.answer),
      ['too_large'],
    );
  } finally {
    await hook.close();
  }
});

test('startHookServer refuses a bad port, naming the option', async () => {
  await assert.rejects(startHookServer({ port: 70_000 }), /invalid option port/);
});

test('`oncely hook` listens, logs each arrival and reports counts on SIGINT', async () => {
  const child = spawn(process.execPath, [MAIN, 'hook', '--port', '0', '--script', '429@1,200'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', () => reject(new Error(`hook exited early: ${out}`)));
    });
    const res = await fetch(`${url}/hooks/run`, {
      method: 'POST',
      body: '{}',
      headers: { 'Idempotency-Key': 'run-9' },
    });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '1');
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
    assert.match(out, /#1 .*POST \/hooks\/run {2}429 rejected {2}key run-9 .*RA 1/);
    assert.match(out, /stopped after 1 arrivals, 0 completions, 0 replays/);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

test('`oncely hook` refuses a bad script with one line and exit 2', async () => {
  const { status: code, stderr: err } = await runOncely([
    'hook',
    '--port',
    '0',
    '--script',
    '429x',
  ]);
  assert.equal(code, 2);
  assert.match(err, /^oncely: invalid option script: got "429x"/);
  assert.equal(err.trim().split('\n').length, 1);
});
