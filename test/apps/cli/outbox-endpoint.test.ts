import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-endpoint-cli-');
const journal = join(dir, 'journal.db');
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const oncely = (...args: string[]) =>
  runOncely([...args, '--journal', journal, '--create'], { SECRET });

test('outbox endpoint: add, list, pause, resume, disable, rotate-secret; intents name it', async () => {
  const add = await oncely(
    'outbox',
    'endpoint',
    'add',
    'shop',
    'http://127.0.0.1:9/h',
    '--rate',
    '50',
    '--secret-env',
    'SECRET',
  );
  assert.equal(add.status, 0, add.stderr);
  assert.match(
    add.stdout,
    /^added: shop +active +breaker closed +50\/s +http:\/\/127\.0\.0\.1:9\/h\n$/,
  );
  const paused = await oncely('outbox', 'endpoint', 'pause', 'shop', '--reason', 'maintenance');
  assert.match(paused.stdout, /^paused: shop +paused .*\(maintenance\)\n$/);
  const intent = await oncely('outbox', 'add', '--endpoint', 'shop', '--data', '{}', '--key', 'k1');
  assert.equal(intent.status, 0, intent.stderr);
  assert.match(intent.stdout, /k1 +POST http:\/\/127\.0\.0\.1:9\/h/);
  const list = await oncely('outbox', 'endpoint', 'list');
  assert.match(list.stdout, /^shop +paused +breaker closed/);
  assert.doesNotMatch((await oncely('outbox', 'endpoint', 'list', '--json')).stdout, /whsec_/);
  assert.match(
    (await oncely('outbox', 'endpoint', 'disable', 'shop')).stdout,
    /^disabled: shop +disabled/,
  );
  const refused = await oncely('outbox', 'endpoint', 'resume', 'shop');
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /^oncely: endpoint shop is disabled; enable it to send again\n$/);
  assert.match(
    (await oncely('outbox', 'endpoint', 'enable', 'shop')).stdout,
    /^enabled: shop +active/,
  );
  const rotated = await oncely('outbox', 'endpoint', 'rotate-secret', 'shop', '--overlap', '1h');
  assert.equal(rotated.status, 0, rotated.stderr);
  assert.match(rotated.stdout, /new signing secret \(shown once\): whsec_/);
});

test('outbox endpoint: update edits what is given; delete cancels its pending intents', async () => {
  await oncely('outbox', 'endpoint', 'add', 'edit', 'http://127.0.0.1:9/e', '--rate', '5');
  const updated = await oncely(
    'outbox',
    'endpoint',
    'update',
    'edit',
    '--url',
    'http://127.0.0.1:9/f',
    '--rate',
    'none',
    '--breaker-min',
    '3',
  );
  assert.equal(updated.status, 0, updated.stderr);
  assert.match(
    updated.stdout,
    /^updated: edit +active +breaker closed +no limit +http:\/\/127\.0\.0\.1:9\/f\n$/,
  );
  const json = JSON.parse((await oncely('outbox', 'endpoint', 'list', '--json')).stdout);
  const edit = json.find((e: { id: string }) => e.id === 'edit');
  assert.equal(edit.settings.breaker.minRequests, 3);
  assert.equal(edit.settings.breaker.coolDownMs, 10_000);
  const none = await oncely('outbox', 'endpoint', 'update', 'edit');
  assert.equal(none.status, 2);
  assert.equal(
    none.stderr,
    'oncely: endpoint update edit: nothing to change; give one or more of --url, --rate, ' +
      '--breaker-ratio, --breaker-min, --breaker-window, --breaker-cool-down, ' +
      '--auto-disable-after, --event-type, --channel, --every-event, --every-channel\n',
  );
  await oncely('outbox', 'endpoint', 'pause', 'edit');
  await oncely('outbox', 'add', '--endpoint', 'edit', '--data', '{}', '--key', 'e1');
  const deleted = await oncely('outbox', 'endpoint', 'delete', 'edit', '--reason', 'retired');
  assert.equal(deleted.status, 0, deleted.stderr);
  assert.equal(deleted.stdout, 'deleted: edit (1 pending intent(s) cancelled)\n');
  assert.match((await oncely('outbox', 'show', 'e1')).stdout, /cancelled[\s\S]*retired/);
  const again = await oncely('outbox', 'endpoint', 'delete', 'edit');
  assert.equal(again.status, 2);
  assert.match(again.stderr, /^oncely: no endpoint "edit" in the journal\n$/);
});

test('outbox endpoint: bad input is one line, a non-zero exit, and changes nothing', async () => {
  await oncely('outbox', 'endpoint', 'add', 'kept', 'http://127.0.0.1:9/k');
  const cases: [string[], RegExp, number][] = [
    [['add', 'kept', 'http://127.0.0.1:9/x'], /^oncely: endpoint kept exists already\n$/, 2],
    [
      ['add', 'bad name', 'http://x.test/'],
      /^oncely: invalid option endpoint: .*letters, digits/,
      2,
    ],
    [['add', 'b', 'ftp://x.test/'], /^oncely: invalid option url: .*http\(s\) URL\n$/, 2],
    [['add', 'b', 'http://x.test/', '--rate', '0'], /^oncely: invalid option --rate: got "0"/, 2],
    [
      ['add', 'b', 'http://x.test/', '--secret-env', 'NOPE'],
      /^oncely: invalid option --secret-env/,
      2,
    ],
    [
      ['add', 'b', 'http://x.test/', '--breaker-cool-down', '10'],
      /^oncely: invalid option --breaker-cool-down/,
      2,
    ],
    [['pause', 'nope'], /^oncely: no endpoint "nope" in the journal\n$/, 2],
    [['update', 'kept', '--url', 'ftp://x'], /^oncely: invalid option url: .*http\(s\) URL\n$/, 2],
    [['update', 'kept', '--rate', '-2'], /^oncely: invalid option --rate: got "-2"/, 2],
    [['enable', 'nope'], /^oncely: no endpoint "nope" in the journal\n$/, 2],
    [['rotate-secret', 'kept', '--overlap', 'soon'], /^oncely: invalid option --overlap/, 2],
    [['add'], /^oncely: missing required argument 'name'/, 2],
  ];
  for (const [args, message, status] of cases) {
    const result = await oncely('outbox', 'endpoint', ...args);
    assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
    assert.equal(result.stderr.split('\n').length, 2, 'one line');
  }
  const list = await oncely('outbox', 'endpoint', 'list');
  assert.equal(list.stdout.trim().split('\n').length, 2, 'shop and kept, nothing else');
  assert.match(list.stdout, /kept +active/);
  const noEndpoint = await oncely('outbox', 'add', '--endpoint', 'nope', '--data', '{}');
  assert.equal(noEndpoint.status, 2, 'an endpoint the journal does not hold is bad input');
  assert.match(noEndpoint.stderr, /^oncely: no endpoint "nope" in the journal\n$/);
});

test('outbox run --notify-disabled: a URL or endpoint:NAME, else one line and exit 2', async () => {
  const bad = await oncely('outbox', 'run', '--notify-disabled', 'ftp://x');
  assert.equal(bad.status, 2);
  assert.match(
    bad.stderr,
    /^oncely: invalid option --notify-disabled: got "ftp:\/\/x", expected an http\(s\) URL or endpoint:NAME\n$/,
  );
});

test('outbox endpoint --help on each command', async () => {
  for (const command of ['add', 'list', 'pause', 'resume', 'disable', 'rotate-secret']) {
    const help = await runOncely(['outbox', 'endpoint', command, '--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, new RegExp(`^Usage: oncely outbox endpoint ${command}`));
  }
});

test('signing keys are checked the same way by every command; whsk_ keys serve endpoints', async () => {
  const { generateWebhookKeyPair } = await import('#oncely/contract/webhook-keys.js');
  const { secretKey, publicKey } = generateWebhookKeyPair();
  const env = { BADSIG: 'hello', V1A: secretKey, PUBLIC: publicKey };
  const run = (...args: string[]) =>
    runOncely([...args, '--journal', join(dir, 'keys.db'), '--create'], env);
  const refused = [
    await run('outbox', 'run', '--signing-secret-env', 'BADSIG'),
    await run('outbox', 'endpoint', 'add', 'bad', 'http://127.0.0.1:9/h', '--secret-env', 'BADSIG'),
    await run('outbox', 'endpoint', 'add', 'pub', 'http://127.0.0.1:9/h', '--secret-env', 'PUBLIC'),
  ];
  for (const r of refused) {
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      /^oncely: invalid option --(signing-)?secret-env(: got "| )(BADSIG|PUBLIC)/,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.doesNotMatch(r.stderr, /hello/);
  }
  const v1a = await run(
    'outbox',
    'endpoint',
    'add',
    'ed',
    'http://127.0.0.1:9/h',
    '--secret-env',
    'V1A',
  );
  assert.equal(v1a.status, 0, v1a.stderr);
  const rotated = await run('outbox', 'endpoint', 'rotate-secret', 'ed', '--secret-env', 'BADSIG');
  assert.equal(rotated.status, 2, rotated.stderr);
  const list = await run('outbox', 'endpoint', 'list');
  assert.doesNotMatch(list.stdout, /^bad|^pub/m, 'nothing added for a refused key');
});
