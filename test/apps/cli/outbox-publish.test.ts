import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

const dir = tempDir('oncely-publish-cli-');
const journal = join(dir, 'journal.db');
const oncely = (...args: string[]) => runOncely([...args, '--journal', journal, '--create']);

test('outbox publish: an event to the endpoints subscribed to its type, once per id', async () => {
  for (const [name, ...flags] of [
    ['orders', '--event-type', 'order.*'],
    ['tenant', '--channel', 'tenant-1'],
    ['invoices', '--event-type', 'invoice.paid'],
  ]) {
    const add = await oncely(
      'outbox',
      'endpoint',
      'add',
      name!,
      `http://127.0.0.1:9/${name}`,
      ...flags,
    );
    assert.equal(add.status, 0, add.stderr);
  }
  const first = await oncely(
    'outbox',
    'publish',
    '--type',
    'order.created',
    '--data',
    '{"id":1}',
    '--id',
    'm1',
  );
  assert.equal(first.status, 0, first.stderr);
  assert.equal(first.stdout, 'published m1 to orders (1 intent(s) recorded)\n');
  const again = await oncely(
    'outbox',
    'publish',
    '-t',
    'order.created',
    '-d',
    '{"id":1}',
    '--id',
    'm1',
  );
  assert.equal(again.stdout, 'published m1 to orders (0 intent(s) recorded)\n');
  const tagged = await oncely(
    'outbox',
    'publish',
    '-t',
    'invoice.paid',
    '-d',
    '{}',
    '--id',
    'm2',
    '--channel',
    'tenant-1',
  );
  assert.equal(tagged.stdout, 'published m2 to invoices, tenant (2 intent(s) recorded)\n');
  const list = await oncely('outbox', 'list');
  assert.match(list.stdout, /m1:orders/);
  assert.match(list.stdout, /m2:tenant/);

  // The subscription changes with `endpoint update`; contradicting flags change nothing.
  const update = await oncely('outbox', 'endpoint', 'update', 'invoices', '--every-event');
  assert.equal(update.status, 0, update.stderr);
  const m3 = await oncely('outbox', 'publish', '-t', 'refund.made', '-d', '{}', '--id', 'm3');
  assert.match(m3.stdout, /to invoices/);
  const both = await oncely(
    'outbox',
    'endpoint',
    'update',
    'orders',
    '--every-event',
    '--event-type',
    'x',
  );
  assert.equal(both.status, 2);
  assert.match(both.stderr, /--every-event.*not with --event-type/);
});

test('outbox publish refuses bad input with one line and exit 2, recording nothing', async () => {
  for (const args of [
    ['-t', 'order created', '-d', '{}'],
    ['-t', 'order.created', '-d', '{not json'],
    ['-t', 'order.created', '-d', '{}', '--id', 'a:b'],
    ['-t', 'order.created', '-d', '{}', '--channel', 'has space'],
  ]) {
    const result = await oncely('outbox', 'publish', ...args);
    assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
  }
  const list = await oncely('outbox', 'list', '--json');
  assert.doesNotMatch(list.stdout, /order created|a:b/);
});
