import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI } from '../support/repo-path.js';

const dir = mkdtempSync(join(tmpdir(), 'oncely-outbox-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const journal = join(dir, 'journal.db');
const oncely = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, API_TOKEN: 'Bearer s3cret' } });

test('outbox add records without sending; the secret header is named, never written; list, show, cancel, retry', () => {
  const add = oncely('outbox', 'add', 'http://127.0.0.1:9/orders', '--data', '{"order":1}', '--key', 'order-1', '-H', 'Authorization: Bearer s3cret', '--secret-header', 'authorization', '--journal', journal);
  assert.equal(add.status, 0, add.stderr);
  assert.match(add.stdout, /^recorded: pending +0\/3 +order-1 +POST http:\/\/127\.0\.0\.1:9\/orders/);
  const show = oncely('outbox', 'show', 'order-1', '--journal', journal);
  assert.match(show.stdout, /re-supplied at send time: authorization/);
  assert.doesNotMatch(show.stdout, /s3cret/);
  const again = oncely('outbox', 'add', 'http://127.0.0.1:9/orders', '--data', '{"order":2}', '--key', 'order-1', '--journal', journal);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /^oncely: intent order-1 is already recorded with a different/);
  assert.equal(oncely('outbox', 'cancel', 'order-1', '--reason', 'duplicate order', '--journal', journal).status, 0);
  assert.match(oncely('outbox', 'list', '--journal', journal).stdout, /cancelled .*order-1.*\n1 cancelled\n$/);
  assert.match(oncely('outbox', 'retry', 'order-1', '--journal', journal).stdout, /^reopened: pending/);
});

test('bad input is one line and a non-zero exit, and changes nothing', () => {
  const bogus = oncely('outbox', 'list', '--state', 'bogus', '--journal', journal);
  assert.equal(bogus.status, 2);
  assert.match(bogus.stderr, /^oncely: invalid option --state: got "bogus"/);
  const missing = oncely('outbox', 'show', 'nope', '--journal', journal);
  assert.notEqual(missing.status, 0);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
  const secret = oncely('outbox', 'run', '--secret', 'Authorization=NOT_SET_ANYWHERE', '--journal', journal);
  assert.equal(secret.status, 2);
  assert.match(secret.stderr, /environment variable NOT_SET_ANYWHERE/);
  const badUrl = oncely('outbox', 'add', 'ftp://x', '--data', '{}', '--journal', journal);
  assert.equal(badUrl.status, 2);
});
