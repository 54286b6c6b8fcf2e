import { createServer } from 'node:http';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCallers } from '#cli/serve/callers.js';
import { startServer } from '#cli/serve/start-server.js';
import { TOKENS } from './server-harness.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-notify-');

test('serve --notify-url: a completed hook owes one notification, delivered by the outbox worker that runs with the server', async () => {
  const received: Array<{ key: string | undefined; event: { key: string; event: string } }> = [];
  let notified!: () => void;
  const twoNotified = new Promise<void>((resolve) => (notified = resolve));
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({
        key: req.headers['idempotency-key'] as string | undefined,
        event: JSON.parse(body) as { key: string; event: string },
      });
      res.writeHead(204).end();
      if (received.length === 2) notified();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const notifyUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/events`;
  // The worker starts once the server's tables are set up: a claim made while the set-up held
  // SQLite's write lock waited out the busy timeout and failed.
  const errors: unknown[] = [];
  const server = await startServer({
    onError: (error) => errors.push(error),
    port: 0,
    dataDir: dir,
    callers: createCallers({ devToken: TOKENS.dev }),
    notifyUrl,
    purgeIntervalMs: null,
  });
  try {
    const hook = (key: string) =>
      fetch(`${server.url}/hooks/run-complete`, {
        method: 'POST',
        body: `{"run":"${key}"}`,
        headers: { authorization: `Bearer ${TOKENS.dev}`, 'idempotency-key': key },
      });
    assert.equal((await hook('run-1')).status, 200);
    assert.equal((await hook('run-1')).headers.get('idempotent-replayed'), 'true');
    assert.equal((await hook('run-2')).status, 200);
    await twoNotified;
    assert.deepEqual(
      received.map((r) => r.event.key).sort(),
      ['run-1', 'run-2'],
      'one notification per completed key, the replay none',
    );
    assert.ok(received.every((r) => r.event.event === 'hook.completed' && r.key !== undefined));
    assert.deepEqual(errors, [], 'nothing failed, the first claim included');
  } finally {
    await server.close();
    receiver.close();
  }
});
