import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-attempt-log-');
const journal = join(dir, 'journal.db');
const oncely = (...args: string[]) => runOncely([...args, '--journal', journal, '--create']);

// A receiver that refuses for good (422) with a reason, and answers /bin with 5000 binary bytes.
const BINARY = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 13) % 256));
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    req.url === '/bin'
      ? res.writeHead(400, { 'x-reason': 'binary' }).end(BINARY)
      : res
          .writeHead(422, { 'content-type': 'application/json', 'x-reason': 'bad order' })
          .end('{"error":"order 7 is unknown"}'),
  );
});
let url = '';
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  await oncely('outbox', 'add', `${url}/no`, '--data', '{}', '--key', 'why');
  await oncely('outbox', 'add', `${url}/bin`, '--data', '{}', '--key', 'bin');
  await oncely('outbox', 'run');
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface AttemptJson {
  status: number;
  durationMs: number | null;
  response: {
    headers: Record<string, string>;
    body: string | null;
    bodyBase64: string;
    bodyBytes: number;
    truncated: boolean;
  } | null;
}

test('outbox show prints each attempt with its duration, headers and body', async () => {
  const shown = await oncely('outbox', 'show', 'why');
  assert.equal(shown.status, 0);
  assert.match(shown.stdout, /^ {6}took \d+ ms$/m);
  assert.match(shown.stdout, /^ {6}headers .*x-reason: bad order/m);
  assert.match(shown.stdout, /^ {6}body 30 bytes: \{"error":"order 7 is unknown"\}$/m);
  const binary = await oncely('outbox', 'show', 'bin');
  assert.match(binary.stdout, /body 4096 bytes, cut at the bound, not UTF-8 text/);
});

test('outbox show --json and list --json --attempts carry the response, binary-safe', async () => {
  const shown = JSON.parse((await oncely('outbox', 'show', 'why', '--json')).stdout) as {
    key: string;
    attempts: AttemptJson[];
  };
  assert.equal(shown.key, 'why');
  const [attempt] = shown.attempts;
  assert.equal(attempt?.status, 422);
  assert.equal(attempt?.response?.body, '{"error":"order 7 is unknown"}');
  assert.equal(attempt?.response?.headers['x-reason'], 'bad order');
  assert.equal(typeof attempt?.durationMs, 'number');
  const listed = JSON.parse(
    (await oncely('outbox', 'list', '--json', '--attempts', '--target', `${url}/bin`)).stdout,
  ) as { attempts: AttemptJson[] }[];
  const response = listed[0]?.attempts[0]?.response;
  assert.equal(response?.body, null, 'not text');
  assert.equal(response?.truncated, true);
  assert.equal(response?.bodyBytes, 4096);
  assert.deepEqual(Buffer.from(response!.bodyBase64, 'base64'), BINARY.subarray(0, 4096));
});
