// Keys are scoped by caller (docs/design.md, "Keys are scoped by the authenticated caller"): caller A
// can neither see nor replay caller B's receipts, rows or hook acks.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  bearer,
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type TestServer,
} from './server-harness.js';

const LAB3 = '{"student":"achen","assignment":"lab3"}';

describe('caller isolation', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  const submit = (token: string, key: string, body = LAB3) =>
    send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(token, key),
      body,
    });
  const dump = async (token: string) =>
    (
      await send(t.port, { path: '/dropbox/store', headers: { authorization: bearer(token) } })
    ).json<{ caller: string; rows: Array<{ key: string; student: string; writes: number }> }>();
  const receipts = async (token: string) =>
    (
      await send(t.port, { path: '/ledger/receipts', headers: { authorization: bearer(token) } })
    ).json<{ receipts: Array<{ key: string; caller: string }> }>();

  it('the same key from two callers is two independent effects, neither a replay of the other', async () => {
    const a = await submit(TOKENS.alice, 'shared-key');
    const b = await submit(TOKENS.bob, 'shared-key');
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.equal(a.headers['idempotent-replayed'], undefined);
    assert.equal(b.headers['idempotent-replayed'], undefined, "bob must not get alice's receipt");
    assert.deepEqual(
      (await dump(TOKENS.alice)).rows.map((r) => [r.key, r.writes]),
      [['shared-key', 1]],
    );
    assert.deepEqual(
      (await dump(TOKENS.bob)).rows.map((r) => [r.key, r.writes]),
      [['shared-key', 1]],
    );
  });

  it('the same key with another payload from another caller is not a conflict', async () => {
    const b = await submit(TOKENS.bob, 'alice-private', '{"student":"bchen","assignment":"lab9"}');
    const a = await submit(TOKENS.alice, 'alice-private');
    assert.equal(b.status, 201);
    assert.equal(a.status, 201, a.text);
    const replay = await submit(TOKENS.alice, 'alice-private');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json<{ student: string }>().student, 'achen');
  });

  it("bob's dump and receipts show none of alice's rows, and his lookup of her key says never seen", async () => {
    await submit(TOKENS.alice, 'only-alice');
    const bobRows = (await dump(TOKENS.bob)).rows.map((r) => r.key);
    assert.ok(!bobRows.includes('only-alice'), `bob sees ${bobRows.join(', ')}`);
    const bobReceipts = (await receipts(TOKENS.bob)).receipts;
    assert.ok(
      bobReceipts.every((r) => r.caller === 'bob'),
      JSON.stringify(bobReceipts),
    );
    assert.ok(!bobReceipts.some((r) => r.key === 'only-alice'));
    assert.ok((await receipts(TOKENS.alice)).receipts.some((r) => r.key === 'only-alice'));

    const lookup = await send(t.port, {
      path: '/dropbox/submissions/only-alice',
      headers: { authorization: bearer(TOKENS.bob) },
    });
    assert.equal(lookup.status, 404);
    assert.equal(lookup.json<{ lookup: string }>().lookup, 'never_seen');
    const own = await send(t.port, {
      path: '/dropbox/submissions/only-alice',
      headers: { authorization: bearer(TOKENS.alice) },
    });
    assert.equal(own.status, 200);
    assert.equal(own.json<{ lookup: string; status: number }>().lookup, 'found');
  });

  it("hook acks and hits are per caller too: bob's resend of alice's hook is a new completion", async () => {
    const hook = (token: string) =>
      send(t.port, {
        method: 'POST',
        path: '/hooks/run-complete',
        headers: {
          authorization: bearer(token),
          'idempotency-key': 'run-9',
          'content-type': 'application/json',
        },
        body: '{"run_id":"run-9"}',
      });
    assert.equal((await hook(TOKENS.alice)).status, 200);
    const bob = await hook(TOKENS.bob);
    assert.equal(bob.status, 200);
    assert.equal(bob.headers['idempotent-replayed'], undefined);
    const hits = async (token: string) =>
      (
        await send(t.port, { path: '/hooks/debug/hits', headers: { authorization: bearer(token) } })
      ).json<{ hits: unknown[]; completions: number }>();
    assert.equal((await hits(TOKENS.alice)).hits.length, 1);
    assert.equal((await hits(TOKENS.bob)).completions, 1);
    assert.equal((await hits(TOKENS.dev)).hits.length, 0);
  });
});
