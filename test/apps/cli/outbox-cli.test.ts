import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI } from '../../support/repo-path.js';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-outbox-cli-');
const journal = join(dir, 'journal.db');
// In-process: the program the binary runs, with its output captured (the crash below spawns it).
const oncely = (...args: string[]) => runOncely(args, { API_TOKEN: 'Bearer s3cret' });

test('outbox add records without sending; the secret header is named, never written; list, show, cancel, retry', async () => {
  const add = await oncely(
    'outbox',
    'add',
    'http://127.0.0.1:9/orders',
    '--data',
    '{"order":1}',
    '--key',
    'order-1',
    '-H',
    'Authorization: Bearer s3cret',
    '--secret-header',
    'authorization',
    '--journal',
    journal,
    '--create',
  );
  assert.equal(add.status, 0, add.stderr);
  assert.match(
    add.stdout,
    /^recorded: pending +0\/8 +order-1 +POST http:\/\/127\.0\.0\.1:9\/orders/,
  );
  const show = await oncely('outbox', 'show', 'order-1', '--journal', journal);
  assert.match(show.stdout, /re-supplied at send time: authorization/);
  assert.doesNotMatch(show.stdout, /s3cret/);
  const again = await oncely(
    'outbox',
    'add',
    'http://127.0.0.1:9/orders',
    '--data',
    '{"order":2}',
    '--key',
    'order-1',
    '--journal',
    journal,
  );
  assert.equal(again.status, 2, 'a different payload under a recorded key is bad input');
  assert.match(again.stderr, /^oncely: intent order-1 is already recorded with a different/);
  assert.equal(
    (
      await oncely(
        'outbox',
        'cancel',
        'order-1',
        '--reason',
        'duplicate order',
        '--journal',
        journal,
      )
    ).status,
    0,
  );
  assert.match(
    (await oncely('outbox', 'list', '--journal', journal)).stdout,
    /cancelled .*order-1.*\n1 cancelled\n$/,
  );
  assert.match(
    (await oncely('outbox', 'retry', 'order-1', '--journal', journal)).stdout,
    /^reopened: pending/,
  );
});

test('bad input is one line and a non-zero exit, and changes nothing', async () => {
  const bogus = await oncely('outbox', 'list', '--state', 'bogus', '--journal', journal);
  assert.equal(bogus.status, 2);
  assert.match(bogus.stderr, /^oncely: invalid option --state: got "bogus"/);
  const missing = await oncely('outbox', 'show', 'nope', '--journal', journal);
  assert.notEqual(missing.status, 0);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
  const secret = await oncely(
    'outbox',
    'run',
    '--secret',
    'Authorization=NOT_SET_ANYWHERE',
    '--journal',
    journal,
  );
  assert.equal(secret.status, 2);
  assert.match(secret.stderr, /environment variable NOT_SET_ANYWHERE/);
  const badUrl = await oncely('outbox', 'add', 'ftp://x', '--data', '{}', '--journal', journal);
  assert.equal(badUrl.status, 2);
});

test('deliver --journal after a crash: the intent is found under its key and resumed, the lost attempt counted', async () => {
  const { createServer } = await import('node:http');
  const { createSqliteJournalStore, openSqliteDatabase } = await import(
    '#oncely/stores/sqlite/index.js'
  );
  const { createJournal } = await import('#oncely/journal/index.js');
  const keys: string[] = [];
  const server = createServer((req, res) => {
    keys.push(String(req.headers['idempotency-key']));
    req.resume();
    req.on('end', () =>
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"saved":true}'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/orders`;
  const file = join(dir, 'deliver.db');
  try {
    // The first run recorded the intent and started attempt 1, then died (its lease is long gone).
    const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
    await createJournal({ store }).record({
      key: 'order-9',
      target: url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"order":9}',
      maxAttempts: 5,
      attemptTimeoutMs: 10_000,
      createdBy: 'oncely deliver',
    });
    const [claim] = await store.claim('dead-run', Date.now(), 1, 1);
    await store.startAttempts([
      {
        key: 'order-9',
        token: claim!.token,
        attempt: 1,
        worker: 'dead-run',
        startedAt: Date.now(),
      },
    ]);
    await store.close();

    // Not spawnSync: the receiver lives in this process and must keep answering.
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [
      CLI,
      'deliver',
      url,
      '--data',
      '{"order":9}',
      '--key',
      'order-9',
      '--journal',
      file,
      '--base-delay',
      '1ms',
    ]);
    const run = { stdout: '', stderr: '', status: null as number | null };
    child.stdout.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
    run.status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /found in the journal \(1 attempt\(s\) so far\): resuming under the same key/,
    );
    assert.match(run.stdout, /#1 .* unknown +dead-run +the worker stopped mid-attempt/);
    assert.match(run.stdout, /delivered +\d\/5 +order-9/);
    assert.deepEqual(keys, ['order-9'], 'one new request, under the same key');
  } finally {
    server.close();
  }
});

test('outbox add --ordering-key: list and show print the key; an empty one is refused', async () => {
  const ordered = join(dir, 'ordered.db');
  for (const key of ['acct-7-1', 'acct-7-2']) {
    const add = await oncely(
      'outbox',
      'add',
      'http://127.0.0.1:9/accounts',
      '--data',
      `{"event":"${key}"}`,
      '--key',
      key,
      '--ordering-key',
      'acct-7',
      '--journal',
      ordered,
      '--create',
    );
    assert.equal(add.status, 0, add.stderr);
    assert.match(add.stdout, new RegExp(`^recorded: pending .* ${key} .* order acct-7\\n$`));
  }
  const list = await oncely('outbox', 'list', '--journal', ordered);
  assert.match(list.stdout, /acct-7-2 .* order acct-7\n.*acct-7-1 .* order acct-7\n2 pending/);
  const json = await oncely('outbox', 'list', '--json', '--journal', ordered);
  assert.deepEqual(
    (JSON.parse(json.stdout) as { orderingKey: string }[]).map((i) => i.orderingKey),
    ['acct-7', 'acct-7'],
  );
  const show = await oncely('outbox', 'show', 'acct-7-2', '--journal', ordered);
  assert.match(show.stdout, /ordering key acct-7: after every earlier intent of this key/);
  const empty = await oncely(
    'outbox',
    'add',
    'http://127.0.0.1:9/accounts',
    '--data',
    '{}',
    '--ordering-key',
    '',
    '--journal',
    ordered,
  );
  assert.equal(empty.status, 2, empty.stderr);
  assert.match(empty.stderr, /^oncely: invalid option orderingKey: got ""/);
  assert.match((await oncely('outbox', 'list', '--journal', ordered)).stdout, /\n2 pending\n$/);
});
