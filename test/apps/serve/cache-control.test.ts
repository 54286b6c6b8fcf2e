// Cache-Control: no-store on every answer of `oncely serve` under /dropbox, /notes, /hooks and
// /ledger, first answers and replays alike, over a real socket (startServer -> createServerApp):
// they carry receipts, and a shared cache must never keep one and hand it to someone else.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { submissionFingerprint } from '#cli/receivers/dropbox/submission.js';
import {
  bearer,
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type RawRequest,
  type RawResponse,
  type TestServer,
} from './server-harness.js';

/** Headers of one message or one connection, which a replay need not repeat. */
const PER_MESSAGE = new Set([
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
]);

/** The first answer's headers, each with the same value in the replay (which adds Idempotent-Replayed). */
function assertSameHeaders(first: RawResponse, replay: RawResponse): void {
  for (const [name, value] of Object.entries(first.headers)) {
    if (!PER_MESSAGE.has(name))
      assert.deepEqual(replay.headers[name], value, `the replay's ${name}`);
  }
  assert.equal(replay.headers['idempotent-replayed'], 'true');
}

describe('Cache-Control: no-store under /dropbox, /notes, /hooks, /ledger', () => {
  let t: TestServer;
  const twice = async (request: RawRequest): Promise<[RawResponse, RawResponse]> => [
    await send(t.port, request),
    await send(t.port, request),
  ];
  const assertNoStore = (response: RawResponse, what: string): void =>
    assert.equal(response.headers['cache-control'], 'no-store', `${what} (${response.status})`);

  before(async () => {
    t = await startTestServer({
      closesAtOf: (assignment) => (assignment === 'closed-lab' ? 0 : undefined),
    });
  });
  after(() => t.close());

  it('a dropbox 201 and its replay carry the same headers, no-store included; so do a 403 and a 422', async () => {
    const [first, replay] = await twice({
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.dev, 'cc-1'),
      body: '{"student":"achen","assignment":"lab3"}',
    });
    assert.equal(first.status, 201);
    assertNoStore(first, 'first answer');
    assertNoStore(replay, 'replay');
    assertSameHeaders(first, replay);

    const [closed, closedAgain] = await twice({
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.dev, 'cc-2'),
      body: '{"student":"achen","assignment":"closed-lab"}',
    });
    assert.equal(closed.status, 403);
    assertNoStore(closed, 'assignment_closed');
    assertNoStore(closedAgain, 'assignment_closed replayed');
    assertSameHeaders(closed, closedAgain);
    const reused = await send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.dev, 'cc-1'),
      body: '{"student":"achen","assignment":"lab4"}',
    });
    assert.equal(reused.status, 422);
    assertNoStore(reused, 'key_reused');
  });

  it('a notes 200 and a stored 409, first answer and replay', async () => {
    const version = (await send(t.port, { path: '/notes/note-2' })).json<{ version: number }>()
      .version;
    const edit = (key: string, expectedVersion: number): RawRequest => ({
      method: 'PATCH',
      path: '/notes/note-2',
      headers: submissionHeaders(TOKENS.dev, key),
      body: JSON.stringify({ expectedVersion, title: 'Moved to Tuesday' }),
    });
    const [first, replay] = await twice(edit('cc-edit-1', version));
    assert.equal(first.status, 200, first.text);
    assertNoStore(first, 'notes first answer');
    assertNoStore(replay, 'notes replay');
    assertSameHeaders(first, replay);
    const [stale, staleAgain] = await twice(edit('cc-edit-2', version));
    assert.equal(stale.status, 409);
    assertNoStore(stale, 'version_conflict');
    assertSameHeaders(stale, staleAgain);
    assertNoStore(await send(t.port, { path: '/notes/note-2' }), 'GET a note');
  });

  it('a hook ack and its replay, the hit list, the listings, the lookup, and refusals', async () => {
    const [ack, ackAgain] = await twice({
      method: 'POST',
      path: '/hooks/run-complete',
      headers: { authorization: bearer(TOKENS.dev), 'idempotency-key': 'cc-run' },
      body: '{}',
    });
    assert.equal(ack.status, 200);
    assertNoStore(ack, 'hook ack');
    assertNoStore(ackAgain, 'hook replay');
    assert.equal(ackAgain.headers['idempotent-replayed'], 'true');
    const auth = { authorization: bearer(TOKENS.dev) };
    for (const path of [
      '/hooks/debug/hits',
      '/dropbox/store',
      '/ledger/receipts',
      '/dropbox/submissions/cc-1',
      '/dropbox/submissions/never-sent',
      '/dropbox/store?limit=0',
      '/notes/no-such-note',
    ]) {
      assertNoStore(await send(t.port, { path, headers: auth }), path);
    }
    assertNoStore(await send(t.port, { path: '/dropbox/store' }), '401');
  });

  it('a receipt stored without Cache-Control (before this rule) still replays with no-store', async () => {
    const body = '{"student":"achen","assignment":"lab9"}';
    const headers = submissionHeaders(TOKENS.dev, 'cc-old');
    const fingerprint = submissionFingerprint({
      method: 'POST',
      url: new URL(`${t.url}/dropbox/submissions`),
      headers: new Headers(headers),
      body: new TextEncoder().encode(body),
    });
    const stored = await t.server.app.ledger.execute(
      { scope: 'dev', key: 'cc-old', fingerprint },
      async () => ({
        status: 201,
        headers: [['content-type', 'application/json']],
        body: new TextEncoder().encode('{"key":"cc-old"}'),
      }),
    );
    assert.equal(stored.kind, 'executed');
    const replay = await send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers,
      body,
    });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assertNoStore(replay, 'replay of an old receipt');
  });
});
