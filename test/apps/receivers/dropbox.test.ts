// The dropbox story's dropbox as a service (docs/origins.md), in process (no sockets): SQLite in memory, a virtual clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { createLedger } from '#oncely/ledger/index.js';
import {
  createDropboxApp,
  checkSubmission,
  insertSubmission,
  isJsonMediaType,
  listSubmissions,
  setUpDropbox,
  type DropboxAppDeps,
} from '#cli/receivers/dropbox/index.js';
import { sqliteServiceDatabase } from '#cli/receivers/sql/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteTx,
} from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';

const START = Date.UTC(2026, 8, 14, 23, 0, 0);
const CLOSE = START + 60_000;
const LAB3 = '{"student":"achen","assignment":"lab3"}';

async function dropbox(deps: Partial<DropboxAppDeps<SqliteTx>> = {}) {
  const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
  const db = sqliteServiceDatabase(store);
  await setUpDropbox(db);
  const clock = new VirtualClock({ startAt: START });
  const ledger = createLedger({
    store,
    clock,
    leaseMs: 1000,
    retentionMs: 600_000,
    tombstoneMs: 600_000,
  });
  const app = new Hono();
  app.route(
    '/dropbox',
    createDropboxApp({
      ledger,
      db,
      clock,
      scopeOf: (r) => (r.headers.get('authorization') === 'Bearer t' ? 'dev' : undefined),
      ...deps,
    }),
  );
  const drops: string[] = [];
  const call = (
    path: string,
    init: RequestInit & { key?: string; fault?: string; withConnection?: boolean } = {},
  ) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', 'Bearer t');
    if (init.body !== undefined) headers.set('content-type', 'application/json');
    if (init.key !== undefined) headers.set('idempotency-key', init.key);
    if (init.fault !== undefined) headers.set('oncely-fault', init.fault);
    const request = new Request(`http://dropbox.test/dropbox${path}`, { ...init, headers });
    const connection =
      init.withConnection === false ? undefined : { drop: () => void drops.push(path) };
    return app.fetch(request, { connection });
  };
  const submit = (
    key: string,
    body = LAB3,
    extra: { fault?: string; withConnection?: boolean } = {},
  ) => call('/submissions', { method: 'POST', key, body, ...extra });
  const rows = async () =>
    ((await (await call('/store')).json()) as { rows: Array<Record<string, unknown>> }).rows;
  return { app, clock, store, db, drops, call, submit, rows };
}

test('a submission is accepted once: 201 with the row, then the exact retry replays the receipt', async () => {
  const box = await dropbox();
  const first = await box.submit('achen:lab3:v1');
  assert.equal(first.status, 201);
  assert.equal(first.headers.get('location'), '/dropbox/submissions/achen%3Alab3%3Av1');
  const receipt = await first.json();
  assert.deepEqual(receipt, {
    key: 'achen:lab3:v1',
    student: 'achen',
    assignment: 'lab3',
    status: 'accepted',
    writes: 1,
  });
  // Key order and spacing do not make a new submission: the fingerprint is canonical JSON.
  const retry = await box.submit('achen:lab3:v1', '{ "assignment": "lab3", "student": "achen" }');
  assert.equal(retry.status, 201);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(await retry.json(), receipt);
  assert.deepEqual(await box.rows(), [receipt]);
});

test('the same key with another submission is 422 key_reused and writes nothing', async () => {
  const box = await dropbox();
  await box.submit('k1');
  const reused = await box.submit('k1', '{"student":"achen","assignment":"lab4"}');
  assert.equal(reused.status, 422);
  assert.equal(((await reused.json()) as { code: string }).code, 'key_reused');
  assert.equal((await box.rows()).length, 1);
});

test("the dropbox story's extension: ack swallowed at closes_at - 1 s, retry at closes_at + 1 s replays; a new key is refused; the store has one row", async () => {
  const box = await dropbox({
    fault: 'swallow-first-ack',
    closesAtOf: (assignment) => (assignment === 'lab3' ? CLOSE : undefined),
  });
  await box.clock.advanceTo(CLOSE - 1000);
  const swallowed = await box.submit('achen:lab3:v1');
  assert.deepEqual(box.drops, ['/submissions'], 'the connection was dropped after the commit');
  assert.equal(swallowed.headers.get('idempotent-replayed'), null);

  await box.clock.advanceTo(CLOSE + 1000);
  const retry = await box.submit('achen:lab3:v1');
  assert.equal(retry.status, 201);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal(box.drops.length, 1, 'a replay is answered, not swallowed');

  const late = await box.submit('achen:lab3:v2');
  assert.equal(late.status, 403);
  const problem = (await late.json()) as { code: string; closesAt: string; assignment: string };
  assert.equal(problem.code, 'assignment_closed');
  assert.equal(problem.closesAt, new Date(CLOSE).toISOString());
  // The refusal is a business answer: stored, and replayed to a retry.
  const lateAgain = await box.submit('achen:lab3:v2');
  assert.equal(lateAgain.status, 403);
  assert.equal(lateAgain.headers.get('idempotent-replayed'), 'true');
  // Other assignments are still open (and their first ack is swallowed too: the fault is server-wide).
  await box.submit('achen:lab4:v1', '{"student":"achen","assignment":"lab4"}');
  assert.equal(box.drops.length, 2);

  assert.deepEqual(
    (await box.rows()).map((r) => [r['key'], r['writes']]),
    [
      ['achen:lab3:v1', 1],
      ['achen:lab4:v1', 1],
    ],
  );
  // The lookup by key is read-only and allowed after the deadline.
  const lookup = await box.call('/submissions/achen:lab3:v1');
  assert.equal(lookup.status, 200);
  const found = (await lookup.json()) as {
    lookup: string;
    status: number;
    receipt: { writes: number };
  };
  assert.equal(found.lookup, 'found');
  assert.equal(found.status, 201);
  assert.equal(found.receipt.writes, 1);
});

test('Oncely-Fault per request: swallow on one request, none to switch a server fault off', async () => {
  const box = await dropbox();
  await box.submit('k1', LAB3, { fault: 'swallow-first-ack' });
  assert.deepEqual(box.drops, ['/submissions']);
  const retry = await box.submit('k1', LAB3, { fault: 'swallow-first-ack' });
  assert.equal(
    retry.headers.get('idempotent-replayed'),
    'true',
    'the header repeats on the retry; only the first ack is swallowed',
  );

  const faulty = await dropbox({ fault: 'swallow-first-ack' });
  const answered = await faulty.submit('k2', LAB3, { fault: 'none' });
  assert.equal(answered.status, 201);
  assert.deepEqual(faulty.drops, []);

  const bad = await box.submit('k3', LAB3, { fault: 'drop-all' });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { code: string }).code, 'invalid_fault');
});

test('without a connection to drop, a swallowed ack breaks the body mid-reply; the row is committed', async () => {
  const box = await dropbox({ fault: 'swallow-first-ack' });
  const response = await box.submit('k1', LAB3, { withConnection: false });
  await assert.rejects(response.text(), /ack swallowed/);
  assert.equal((await box.rows()).length, 1);
});

test('lookup by key: never seen is 404, an expired receipt is 410 (seen, and forgotten), a bad key is 400', async () => {
  const box = await dropbox();
  const never = await box.call('/submissions/nobody');
  assert.equal(never.status, 404);
  assert.deepEqual(((await never.json()) as { code: string; lookup: string }).lookup, 'never_seen');
  await box.submit('k1');
  await box.clock.advance(600_001);
  const expired = await box.call('/submissions/k1');
  assert.equal(expired.status, 410);
  assert.equal(((await expired.json()) as { lookup: string }).lookup, 'expired');
  assert.equal((await box.call('/submissions/%20')).status, 400);
});

test('requests without a known caller are 401 before anything is read', async () => {
  const box = await dropbox();
  const response = await box.app.fetch(
    new Request('http://dropbox.test/dropbox/submissions', {
      method: 'POST',
      body: LAB3,
      headers: { 'idempotency-key': 'k' },
    }),
  );
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="oncely"');
  assert.equal((await box.rows()).length, 0);
});

test('GET /store?limit=N: the newest N rows, oldest first, with how many there are in all; a bad limit is 400 naming the range', async () => {
  const box = await dropbox();
  // Keys in reverse alphabetical order, one a second: the order seen is by time, not by key.
  for (const [i, key] of ['k5', 'k4', 'k3', 'k2', 'k1'].entries()) {
    assert.equal(
      (await box.submit(key, JSON.stringify({ student: 'achen', assignment: `lab${i}` }))).status,
      201,
    );
    await box.clock.advance(1000);
  }
  const page = async (query: string) =>
    (await box.call(`/store${query}`)).json() as Promise<{
      caller: string;
      total: number;
      limit: number;
      truncated: boolean;
      rows: Array<{ key: string }>;
    }>;
  const all = await page('');
  assert.deepEqual([all.total, all.limit, all.truncated], [5, 100, false]);
  assert.deepEqual(
    all.rows.map((r) => r.key),
    ['k5', 'k4', 'k3', 'k2', 'k1'],
  );
  const newest = await page('?limit=2');
  assert.deepEqual([newest.total, newest.limit, newest.truncated], [5, 2, true]);
  assert.deepEqual(
    newest.rows.map((r) => r.key),
    ['k2', 'k1'],
  );
  assert.deepEqual((await page('?limit=5')).truncated, false);
  assert.deepEqual((await page('?limit=1000')).rows.length, 5);

  for (const bad of ['0', '1001', '-1', '1.5', '1e2', 'abc', '', '%205', '2&limit=3']) {
    const refused = await box.call(`/store?limit=${bad}`);
    assert.equal(refused.status, 400, bad);
    assert.equal(refused.headers.get('content-type'), 'application/problem+json');
    const problem = (await refused.json()) as {
      code: string;
      detail: string;
      parameter: string;
      minimum: number;
      maximum: number;
    };
    assert.equal(problem.code, 'invalid_query');
    assert.deepEqual([problem.parameter, problem.minimum, problem.maximum], ['limit', 1, 1000]);
    assert.match(problem.detail, /\?limit= must be one whole number from 1 to 1000/);
  }
  // Who asks comes first: no caller, no listing, whatever the limit.
  assert.equal(
    (await box.app.fetch(new Request('http://dropbox.test/dropbox/store?limit=abc'))).status,
    401,
  );
});

test('writes counts every run of the effect for a key, so a double effect would show in the dump', async () => {
  const box = await dropbox();
  await box.db.transaction(async (sql) => {
    await insertSubmission(sql, 'dev', 'k', { student: 'achen', assignment: 'lab3' }, START);
    await insertSubmission(sql, 'dev', 'k', { student: 'achen', assignment: 'lab3' }, START);
  });
  assert.deepEqual(await box.db.transaction((sql) => listSubmissions(sql, 'dev')), [
    { key: 'k', student: 'achen', assignment: 'lab3', status: 'accepted', writes: 2 },
  ]);
});

test('checkSubmission names every problem at once', () => {
  const limits = { maxFieldLength: 8 };
  assert.deepEqual(checkSubmission({ student: 'achen', assignment: 'lab3' }, limits), {
    ok: true,
    submission: { student: 'achen', assignment: 'lab3' },
  });
  const bad = checkSubmission({ student: 'a-very-long-name', extra: 1 }, limits);
  assert.equal(bad.ok, false);
  assert.deepEqual(!bad.ok && bad.errors, [
    'unknown field "extra" (allowed: student, assignment)',
    'student is longer than 8 characters',
    'assignment is missing',
  ]);
  assert.equal(checkSubmission([], limits).ok, false);
});

test("isJsonMediaType: application/json with no charset or UTF-8 only (the http layer's one rule)", () => {
  for (const ok of [
    'application/json',
    'Application/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
  ])
    assert.ok(isJsonMediaType(ok), ok);
  for (const no of [
    null,
    '',
    'text/json',
    'application/jsonx',
    'application/json; charset=latin1',
    'json',
    'application/+json',
    'application/merge-patch+json',
  ]) {
    assert.ok(!isJsonMediaType(no), String(no));
  }
});

test('a submission in another charset is 415 naming what is accepted, before the ledger; UTF-8 in any case is accepted', async () => {
  const box = await dropbox();
  const send = (type: string) =>
    box.app.fetch(
      new Request('http://dropbox.test/dropbox/submissions', {
        method: 'POST',
        body: LAB3,
        headers: { authorization: 'Bearer t', 'idempotency-key': 'k-type', 'content-type': type },
      }),
    );
  const refused = await send('application/json; charset=latin1');
  assert.equal(refused.status, 415);
  assert.equal(
    refused.headers.get('accept-post'),
    'application/json, application/json; charset=utf-8',
  );
  const problem = (await refused.json()) as { code: string; accepted: string[] };
  assert.equal(problem.code, 'unsupported_media_type');
  assert.deepEqual(problem.accepted, ['application/json', 'application/json; charset=utf-8']);
  assert.deepEqual(await box.rows(), []);
  // The refusal did not pin the key: the same key in UTF-8 is a new submission.
  const accepted = await send('application/json; Charset=UTF-8');
  assert.equal(accepted.status, 201);
  assert.equal(accepted.headers.get('idempotent-replayed'), null);
});
