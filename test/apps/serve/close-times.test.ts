import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCloseTimes } from '#cli/cli/commands/serve.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { isLoopback } from '#cli/serve/start-server.js';
import { redact } from '#oncely/stores/postgres/index.js';

const NOW = Date.UTC(2026, 8, 14, 12, 0, 0);

test('--closes-at: WHEN closes every assignment, ASSIGNMENT=WHEN one; WHEN is an ISO instant or a duration from now', () => {
  const closes = parseCloseTimes(
    ['2026-09-14T23:59:00Z', 'lab3=30s', 'lab4=2026-09-15T08:00:00+02:00'],
    NOW,
  );
  assert.equal(closes.all, Date.UTC(2026, 8, 14, 23, 59, 0));
  assert.deepEqual(
    [...closes.byAssignment],
    [
      ['lab3', NOW + 30_000],
      ['lab4', Date.UTC(2026, 8, 15, 6, 0, 0)],
    ],
  );
  assert.deepEqual(parseCloseTimes([], NOW), { byAssignment: new Map() });
  for (const bad of ['tomorrow', 'lab3=', '=30s', '30', 'lab3=2026-09-14']) {
    assert.throws(
      () => parseCloseTimes([bad], NOW),
      (error) => isInvalidOptionError(error) && error.option === '--closes-at',
      bad,
    );
  }
});

test('loopback addresses are told from the others, and database passwords never reach a banner', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1'])
    assert.ok(isLoopback(host), host);
  for (const host of ['0.0.0.0', '::', '192.168.1.4', 'example.com'])
    assert.ok(!isLoopback(host), host);
  assert.equal(
    redact('postgres://app:s3cret@db.internal:5432/oncely'),
    'postgres://app:***@db.internal:5432/oncely',
  );
  assert.equal(
    redact('postgres://postgres@127.0.0.1:5432/test'),
    'postgres://postgres@127.0.0.1:5432/test',
  );
});
