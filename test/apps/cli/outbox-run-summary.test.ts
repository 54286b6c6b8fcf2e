import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-run-summary-');
const journal = join(dir, 'journal.db');
const oncely = (...args: string[]) => runOncely([...args, '--journal', journal, '--create']);

// A receiver that takes /ok and refuses /no for good (400).
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(req.url === '/no' ? 400 : 200).end('{}'));
});
let url = '';
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const add = (key: string, path: string) =>
  oncely('outbox', 'add', `${url}${path}`, '--data', '{}', '--key', key);

// Before: the summary counted the whole journal, not the run; and no code told a script that a
// run had made dead letters.
test('outbox run sums up its own work, then the journal; --fail-on-dead exits 9 on dead letters', async () => {
  await add('earlier', '/ok');
  assert.match(
    (await oncely('outbox', 'run')).stdout,
    /^outbox run: 1 delivered; journal now: 1 delivered\n$/m,
  );
  await add('fresh', '/ok');
  await add('refused', '/no');
  const run = await oncely('outbox', 'run', '--fail-on-dead');
  assert.match(
    run.stdout,
    /^outbox run: 1 delivered, 1 refused; journal now: 2 delivered, 1 refused\n$/m,
  );
  assert.equal(run.status, 9);
  assert.match(
    run.stderr,
    /^oncely: this run left 1 dead letter\(s\): oncely outbox list --dead\n$/,
  );
  const idle = await oncely('outbox', 'run', '--fail-on-dead');
  assert.equal(idle.status, 0, 'nothing new died in this run');
  assert.match(
    idle.stdout,
    /^outbox run: no intent finished; journal now: 2 delivered, 1 refused\n$/m,
  );
});

test('outbox list --json --attempts carries each intent its attempts', async () => {
  const json = await oncely('outbox', 'list', '--json', '--attempts', '--state', 'refused');
  const [refused] = JSON.parse(json.stdout) as {
    key: string;
    attempts: { attempt: number; status: number }[];
  }[];
  assert.equal(refused?.key, 'refused');
  assert.deepEqual(
    refused?.attempts.map((a) => [a.attempt, a.status]),
    [[1, 400]],
  );
  const plain = JSON.parse((await oncely('outbox', 'list', '--json')).stdout) as object[];
  assert.ok(
    plain.every((intent) => !('attempts' in intent)),
    'only when asked',
  );
});

test('naming what the journal does not hold is bad input for every command: exit 2, one line', async () => {
  for (const args of [
    ['outbox', 'show', 'nope'],
    ['outbox', 'retry', 'nope'],
    ['outbox', 'cancel', 'nope'],
    ['outbox', 'replay', 'nope'],
    ['outbox', 'retry', 'earlier'],
    ['outbox', 'add', '--endpoint', 'nope', '--data', '{}'],
    ['outbox', 'add', `${url}/ok`, '--data', '{"other":1}', '--key', 'earlier'],
    ['outbox', 'endpoint', 'pause', 'nope'],
    ['outbox', 'endpoint', 'rotate-secret', 'nope'],
  ]) {
    const run = await oncely(...args);
    assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  }
});
