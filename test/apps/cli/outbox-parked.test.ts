import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOncely } from '../../support/run-cli.js';
import { tempDir } from '../../support/temp-dir.js';

// Before: an intent parked on a paused endpoint was listed as `next 9999-12-31T23:59:59.000Z`.
const dir = tempDir('oncely-parked-');
const oncely = (...args: string[]) =>
  runOncely([...args, '--journal', join(dir, 'journal.db'), '--create']);

test('a parked intent says it waits for its endpoint, not for the year 9999', async () => {
  assert.equal(
    (await oncely('outbox', 'endpoint', 'add', 'shop', 'http://127.0.0.1:9/h')).status,
    0,
  );
  assert.equal((await oncely('outbox', 'endpoint', 'pause', 'shop')).status, 0);
  await oncely('outbox', 'add', '--endpoint', 'shop', '--data', '{}', '--key', 'k1');
  const run = await oncely('outbox', 'run');
  assert.equal(run.status, 1, 'still pending: the endpoint is paused');
  const list = await oncely('outbox', 'list');
  assert.match(
    list.stdout,
    /k1 .* parked: endpoint shop is paused or disabled \(outbox endpoint resume\)/,
  );
  assert.doesNotMatch(list.stdout, /9999/);
  const show = await oncely('outbox', 'show', 'k1');
  assert.match(show.stdout, /parked: endpoint shop/);
  assert.doesNotMatch(show.stdout, /9999/);
});
