// The Next.js example (examples/nextjs) as its users run it: `next build`, `next start`, and its
// route handler driven over HTTP. The app imports `oncely/fetch` by the package's name; inside
// this repository that name resolves to the repository itself (the package's "exports", through
// the bundler's self-reference), so the route runs this build as an installed package would.
// About 11 CPU-seconds from a clean tree (next build's compile and type check), 5 with its cache.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../support/free-port.js';
import { repoPath } from '../support/repo-path.js';

const NEXT = repoPath('node_modules', 'next', 'dist', 'bin', 'next');
const APP = repoPath('examples', 'nextjs');
// Next.js asks to send usage data unless told not to; a test sends nothing.
const ENV = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

/** Runs `next args` and resolves once it prints `ready`; rejects if it exits first. */
function runNext(
  args: string[],
  ready?: RegExp,
): { child: ChildProcess; done: Promise<string>; ready: Promise<void> } {
  const child = spawn(process.execPath, [NEXT, ...args], { env: ENV });
  let output = '';
  let onReady = (): void => {};
  const readyPromise = new Promise<void>((resolve) => (onReady = resolve));
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    if (ready?.test(output)) onReady();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const done = new Promise<string>((resolve, reject) =>
    // Stopped by the test: next start answers SIGTERM by exiting with 143.
    child.once('close', (code, signal) =>
      code === 0 || child.killed
        ? resolve(output)
        : reject(new Error(`next ${args[0]} exited (${code ?? signal}):\n${output}`)),
    ),
  );
  return { child, done, ready: Promise.race([readyPromise, done.then(() => {})]) };
}

describe('examples/nextjs: a Next.js route handler behind oncely/fetch', () => {
  let url = '';
  let server: ReturnType<typeof runNext> | undefined;
  before(async () => {
    await runNext(['build', APP]).done;
    const port = await freePort();
    server = runNext(['start', APP, '-p', String(port), '-H', '127.0.0.1'], /Ready in/);
    await server.ready;
    url = `http://127.0.0.1:${port}/api/orders`;
  });
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.done;
  });

  const post = (key: string, body: object): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    });

  it('a new key is 201; its retry gets the same body with Idempotent-Replayed: true; another body is 422', async () => {
    const first = await post('k-1', { item: 'tea', qty: 2 });
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const order = (await first.json()) as object;
    assert.deepEqual(order, { id: 'order-1', item: 'tea', qty: 2 });

    const replay = await post('k-1', { item: 'tea', qty: 2 });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await replay.json(), order, 'the same body: the route did not run again');

    const other = await post('k-1', { item: 'cake', qty: 9 });
    assert.equal(other.status, 422);
    assert.equal(((await other.json()) as { code: string }).code, 'key_reused');

    const next = await post('k-2', { item: 'cake', qty: 9 });
    assert.deepEqual(await next.json(), { id: 'order-2', item: 'cake', qty: 9 });
  });
});
