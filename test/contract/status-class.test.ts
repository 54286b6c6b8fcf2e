import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyStatus,
  DEFAULT_STATUS_TABLE,
  outcomeOfStatus,
  statusTable,
  SYNTHETIC_TIMEOUT_STATUS,
} from '#oncely/contract/index.js';

test('every 2xx is success, and ok', () => {
  for (const status of [200, 201, 202, 204, 206, 299]) {
    assert.equal(classifyStatus(status), 'success');
    assert.equal(outcomeOfStatus(status), 'ok');
  }
});

test('the retryable set is exactly {408, 425, 429, 500, 502, 503, 504}', () => {
  assert.deepEqual([...DEFAULT_STATUS_TABLE.retryable].sort(), [408, 425, 429, 500, 502, 503, 504]);
  for (const status of DEFAULT_STATUS_TABLE.retryable) {
    assert.equal(classifyStatus(status), 'retryable');
    assert.equal(outcomeOfStatus(status), 'retry');
  }
});

test('the fatal set is exactly {400, 401, 403, 404, 405, 409, 413, 415, 422}', () => {
  assert.deepEqual(
    [...DEFAULT_STATUS_TABLE.fatal].sort(),
    [400, 401, 403, 404, 405, 409, 413, 415, 422],
  );
  for (const status of DEFAULT_STATUS_TABLE.fatal) {
    assert.equal(classifyStatus(status), 'fatal');
    assert.equal(outcomeOfStatus(status), 'fail');
  }
});

test('an unlisted status is a failure, never guessed retryable', () => {
  for (const status of [100, 301, 304, 402, 410, 418, 451, 501, 505, 599]) {
    assert.equal(classifyStatus(status), 'unlisted');
    assert.equal(outcomeOfStatus(status), 'fail');
  }
});

test('the synthetic status for a transport failure is 408, a retryable one', () => {
  assert.equal(SYNTHETIC_TIMEOUT_STATUS, 408);
  assert.equal(classifyStatus(SYNTHETIC_TIMEOUT_STATUS), 'retryable');
});

test('the table is configurable: statuses move between sets, the default stays as it was', () => {
  const table = statusTable({ retryable: [409, 418], fatal: [503] });
  assert.equal(classifyStatus(409, table), 'retryable');
  assert.equal(classifyStatus(418, table), 'retryable');
  assert.equal(classifyStatus(503, table), 'fatal');
  assert.equal(outcomeOfStatus(409, table), 'retry');
  assert.equal(outcomeOfStatus(503, table), 'fail');
  assert.equal(classifyStatus(429, table), 'retryable', 'untouched statuses keep their class');
  assert.equal(classifyStatus(409), 'fatal');
  assert.equal(classifyStatus(503), 'retryable');
  assert.deepEqual(statusTable(), DEFAULT_STATUS_TABLE);
});

test('a 409 is retryable only when it carries Retry-After (a request still in flight)', () => {
  assert.equal(outcomeOfStatus(409), 'fail');
  assert.equal(outcomeOfStatus(409, DEFAULT_STATUS_TABLE, true), 'retry');
  assert.equal(
    outcomeOfStatus(400, DEFAULT_STATUS_TABLE, true),
    'fail',
    'only the listed statuses yield to Retry-After',
  );
});
