import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

// Before: the outbox used the interactive client's waits (3 attempts, 100 ms, a 10 s cap),
// `--base-delay 1h` was cut to 10 s without a word, and nothing set a max delay or Retry-After.
const dir = tempDir('oncely-retry-flags-');
const journal = join(dir, 'journal.db');
const oncely = (...args: string[]) => runOncely([...args, '--journal', journal, '--create']);
const add = (key: string, ...flags: string[]) =>
  oncely('outbox', 'add', 'http://127.0.0.1:9/h', '--data', '{}', '--key', key, ...flags);
const policyLine = async (key: string) =>
  (await oncely('outbox', 'show', key)).stdout.split('\n').find((l) => l.includes('attempts '));

test("outbox add records the outbox's day-long schedule by default, not the client's waits", async () => {
  const added = await add('default');
  assert.equal(added.status, 0, added.stderr);
  assert.match(added.stdout, / 0\/8 +default /);
  assert.match(
    (await policyLine('default')) ?? '',
    /schedule 5s, 5m, 30m, 2h, 5h, 10h, 10h \(up to \+10 % jitter\); Retry-After obeyed up to the deadline/,
  );
});

test('--schedule, --max-delay and --max-retry-after are recorded; a schedule sets the attempts', async () => {
  const added = await add(
    'own',
    '--schedule',
    '1m,1h',
    '--max-delay',
    '2h',
    '--max-retry-after',
    '3h',
  );
  assert.equal(added.status, 0, added.stderr);
  assert.match(added.stdout, / 0\/3 +own /);
  assert.match((await policyLine('own')) ?? '', /schedule 1m, 1h .*Retry-After obeyed up to 3h/);
  const base = await add('base', '--base-delay', '1h');
  assert.equal(base.status, 0, base.stderr);
  assert.match((await policyLine('base')) ?? '', /backoff 3600000\.\.36000000 ms/);
});

test('values that contradict each other are refused, one line and exit 2, nothing recorded', async () => {
  for (const [flags, message] of [
    [
      ['--schedule', '1m,1h', '--max-delay', '30m'],
      /--schedule: got "1m,1h", expected waits of at most --max-delay \(30m\)/,
    ],
    [
      ['--base-delay', '1h', '--max-delay', '10s'],
      /--base-delay: got "1h", expected waits of at most --max-delay \(10s\)/,
    ],
    [['--schedule', '1m', '--base-delay', '1s'], /no --base-delay with --schedule/],
    [['--schedule', '1m,,2m'], /--schedule: got "1m,,2m"/],
    [['--max-retry-after', 'soon'], /--max-retry-after: got "soon"/],
  ] as const) {
    const refused = await add('refused', ...flags);
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, message);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
  }
  assert.notEqual((await oncely('outbox', 'show', 'refused')).status, 0, 'nothing recorded');
});

test('deliver keeps the short waits: --base-delay 1h against its 10 s cap is refused, not cut', async () => {
  const refused = await runOncely([
    'deliver',
    'http://127.0.0.1:9/h',
    '--data',
    '{}',
    '--base-delay',
    '1h',
    '--max-delay',
    '10s',
  ]);
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /^oncely: invalid option --base-delay: got "1h"/);
});

test('an endpoint keeps its own schedule and attempt limit; its intents take them', async () => {
  const endpoint = await oncely(
    'outbox',
    'endpoint',
    'add',
    'shop',
    'http://127.0.0.1:9/shop',
    '--schedule',
    '10s,1m',
    '--max-attempts',
    '5',
    '--max-retry-after',
    '1h',
  );
  assert.equal(endpoint.status, 0, endpoint.stderr);
  const intent = await oncely(
    'outbox',
    'add',
    '--endpoint',
    'shop',
    '--data',
    '{}',
    '--key',
    'via-shop',
  );
  assert.match(intent.stdout, / 0\/5 +via-shop /);
  assert.match((await policyLine('via-shop')) ?? '', /schedule 10s, 1m .*up to 1h/);
  const own = await oncely(
    'outbox',
    'add',
    '--endpoint',
    'shop',
    '--data',
    '{}',
    '--key',
    'own-limit',
    '-n',
    '2',
  );
  assert.match(own.stdout, / 0\/2 +own-limit /);
});

test("deliver --journal records the client's short policy, not the outbox's schedule", async () => {
  const run = await oncely(
    'deliver',
    'http://127.0.0.1:9/h',
    '--data',
    '{}',
    '--key',
    'interactive',
    '--max-attempts',
    '2',
  );
  assert.equal(run.status, 4, run.stderr + run.stdout); // nothing listens on port 9: gave up
  assert.match(
    (await policyLine('interactive')) ?? '',
    /attempts 2 of 2; .*backoff 100\.\.10000 ms \(full jitter\); Retry-After obeyed up to 30s/,
  );
});
