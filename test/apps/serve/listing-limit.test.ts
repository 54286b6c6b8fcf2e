// The listings of `oncely serve` (GET /dropbox/store, GET /ledger/receipts) over HTTP: the newest
// `?limit=` rows (100 by default, at most 1000), with how many there are in all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import {
  bearer,
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type TestServer,
} from './server-harness.js';

interface Listing {
  readonly caller: string;
  readonly total: number;
  readonly limit: number;
  readonly truncated: boolean;
  readonly rows?: Array<{ key: string }>;
  readonly receipts?: Array<{ key: string; caller: string }>;
}

const KEYS_IN_TIME_ORDER = ['echo', 'delta', 'charlie', 'bravo', 'alpha'];

describe('listings: ?limit=, total and truncated', () => {
  let t: TestServer;
  const clock = new VirtualClock({ startAt: Date.UTC(2026, 8, 14, 9, 0, 0), autoAdvance: false });
  const list = async (path: string, token: string = TOKENS.alice) => {
    const response = await send(t.port, { path, headers: { authorization: bearer(token) } });
    assert.equal(response.status, 200, response.text);
    return response.json<Listing>();
  };

  before(async () => {
    t = await startTestServer({ clock, purgeIntervalMs: null });
    // Alice submits 5, one a second, under keys in reverse alphabetical order (so the order seen
    // is by time, not by key); bob 1, which alice's totals must never count.
    for (const [i, key] of KEYS_IN_TIME_ORDER.entries()) {
      const body = JSON.stringify({ student: 'alice', assignment: `lab${i}` });
      assert.equal(
        (
          await send(t.port, {
            method: 'POST',
            path: '/dropbox/submissions',
            headers: submissionHeaders(TOKENS.alice, key),
            body,
          })
        ).status,
        201,
      );
      await clock.advance(1000);
    }
    assert.equal(
      (
        await send(t.port, {
          method: 'POST',
          path: '/dropbox/submissions',
          headers: submissionHeaders(TOKENS.bob, 'b1'),
          body: '{"student":"bob","assignment":"lab1"}',
        })
      ).status,
      201,
    );
  });
  after(() => t.close());

  it('without ?limit= both send up to 100 and say how many there are', async () => {
    const rows = await list('/dropbox/store');
    assert.deepEqual(
      [rows.caller, rows.total, rows.limit, rows.truncated],
      ['alice', 5, 100, false],
    );
    assert.deepEqual(
      rows.rows?.map((r) => r.key),
      ['echo', 'delta', 'charlie', 'bravo', 'alpha'],
    );
    const receipts = await list('/ledger/receipts');
    assert.deepEqual(
      [receipts.caller, receipts.total, receipts.limit, receipts.truncated],
      ['alice', 5, 100, false],
    );
    assert.deepEqual(
      receipts.receipts?.map((r) => r.key),
      ['alpha', 'bravo', 'charlie', 'delta', 'echo'],
      'receipts: newest first',
    );
  });

  it('?limit=N sends the newest N and says the listing was cut', async () => {
    const rows = await list('/dropbox/store?limit=2');
    assert.deepEqual([rows.total, rows.limit, rows.truncated], [5, 2, true]);
    assert.deepEqual(
      rows.rows?.map((r) => r.key),
      ['bravo', 'alpha'],
      'rows: the newest, oldest first',
    );
    const receipts = await list('/ledger/receipts?limit=2');
    assert.deepEqual([receipts.total, receipts.limit, receipts.truncated], [5, 2, true]);
    assert.deepEqual(
      receipts.receipts?.map((r) => r.key),
      ['alpha', 'bravo'],
    );
    assert.equal((await list('/ledger/receipts?limit=1000')).receipts?.length, 5);
    const bob = await list('/ledger/receipts?limit=1', TOKENS.bob);
    assert.deepEqual(
      [bob.total, bob.truncated, bob.receipts?.map((r) => r.caller)],
      [1, false, ['bob']],
    );
  });

  it('a bad ?limit= is 400 problem+json naming the parameter and the range, after the token is checked', async () => {
    for (const path of ['/dropbox/store', '/ledger/receipts']) {
      for (const bad of ['0', '1001', '99999999', '-3', '2.5', 'ten', '', '3&limit=4']) {
        const response = await send(t.port, {
          path: `${path}?limit=${bad}`,
          headers: { authorization: bearer(TOKENS.alice) },
        });
        assert.equal(response.status, 400, `${path}?limit=${bad}`);
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
        const problem = response.json<{
          code: string;
          detail: string;
          parameter: string;
          minimum: number;
          maximum: number;
        }>();
        assert.equal(problem.code, 'invalid_query');
        assert.deepEqual([problem.parameter, problem.minimum, problem.maximum], ['limit', 1, 1000]);
        assert.match(
          problem.detail,
          /limit= must be one whole number from 1 to 1000 \(default 100\)/,
        );
      }
      assert.equal((await send(t.port, { path: `${path}?limit=ten` })).status, 401);
    }
  });
});
