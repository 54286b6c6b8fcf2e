// The assembled server on a real socket: pages, the store view, faults that drop connections,
// the request log, notes and hooks mounted, graceful close.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bearer,
  send,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type TestServer,
} from './server-harness.js';

const LAB3 = '{"student":"achen","assignment":"lab3"}';

describe('pages: an index until the simulator page is built', () => {
  let t: TestServer;
  let webDir: string;
  before(async () => {
    webDir = await mkdtemp(join(tmpdir(), 'oncely-web-'));
    t = await startTestServer({ webDir: join(webDir, 'dist') });
  });
  after(async () => {
    await t.close();
    await rm(webDir, { recursive: true, force: true });
  });

  it('serves a small index linking every service while web/dist has no index.html', async () => {
    const index = await send(t.port, { path: '/' });
    assert.equal(index.status, 200);
    assert.match(String(index.headers['content-type']), /^text\/html/);
    for (const link of ['/store', '/dropbox/store', '/notes/', '/hooks/debug/hits', '/healthz'])
      assert.ok(index.text.includes(`href="${link}`), link);
  });

  it('serves web/dist once built, with content types, and never a file outside it', async () => {
    const dist = join(webDir, 'dist');
    await mkdir(join(dist, 'chunks'), { recursive: true });
    await writeFile(join(dist, 'index.html'), '<!doctype html><title>sim</title>');
    await writeFile(join(dist, 'main.js'), 'export {};');
    await writeFile(join(dist, 'chunks', 'chart.css'), 'body{}');
    await writeFile(join(webDir, 'secret.txt'), 'do not serve');

    const page = await send(t.port, { path: '/' });
    assert.equal(page.text, '<!doctype html><title>sim</title>');
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(
      String((await send(t.port, { path: '/main.js' })).headers['content-type']),
      /^text\/javascript/,
    );
    assert.match(
      String((await send(t.port, { path: '/chunks/chart.css' })).headers['content-type']),
      /^text\/css/,
    );
    for (const path of [
      '/../secret.txt',
      '/%2e%2e/secret.txt',
      '/..%2fsecret.txt',
      '/chunks/..%2f..%2fsecret.txt',
      '/chunks/%2e%2e/%2e%2e/secret.txt',
      '/chunks\\..\\..\\secret.txt',
      '/nothing.js',
    ]) {
      const response = await send(t.port, { path });
      assert.equal(response.status, 404, path);
      assert.ok(!response.text.includes('do not serve'), path);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/, path);
    }
    // A request-target of `//secret.txt` reads as a network-path reference (host secret.txt, path /).
    assert.ok(!(await send(t.port, { path: '//secret.txt' })).text.includes('do not serve'));
    // The services keep their routes: the page does not shadow them.
    assert.equal((await send(t.port, { path: '/healthz' })).status, 200);
  });

  it('the store view is a page with a strict CSP and a same-origin script', async () => {
    const page = await send(t.port, { path: '/store' });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    assert.match(page.text, /<script type="module" src="\/store\.js">/);
    const script = await send(t.port, { path: '/store.js' });
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    for (const feed of ['/dropbox/store', '/ledger/receipts', '/hooks/debug/hits'])
      assert.ok(script.text.includes(feed), feed);
    assert.ok(script.text.includes('sessionStorage'));
    assert.ok(!/innerHTML/.test(script.text), 'rows are shown as text, never as HTML');
  });
});

describe('faults, hooks, notes and the request log on a real socket', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ hookScript: 'swallow,200' });
  });
  after(() => t.close());

  it('Oncely-Fault: swallow-first-ack commits, drops the connection, and the retry gets the receipt', async () => {
    const headers = {
      ...submissionHeaders(TOKENS.dev, 'achen:lab3:v1'),
      'oncely-fault': 'swallow-first-ack',
    };
    await assert.rejects(
      send(t.port, { method: 'POST', path: '/dropbox/submissions', headers, body: LAB3 }),
      /socket hang up|ECONNRESET/,
    );
    const retry = await send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers,
      body: LAB3,
    });
    assert.equal(retry.status, 201);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    const dump = (
      await send(t.port, { path: '/dropbox/store', headers: { authorization: bearer(TOKENS.dev) } })
    ).json<{ rows: unknown[] }>();
    assert.deepEqual(dump.rows, [
      { key: 'achen:lab3:v1', student: 'achen', assignment: 'lab3', status: 'accepted', writes: 1 },
    ]);

    const posts = t.logLines.filter((l) => l['path'] === '/dropbox/submissions');
    assert.deepEqual(
      posts.map((l) => [l['status'], l['outcome'], l['dropped'] ?? false, l['key'], l['caller']]),
      [
        [null, 'new', true, 'achen:lab3:v1', 'dev'],
        [201, 'replay', false, 'achen:lab3:v1', 'dev'],
      ],
    );
    const conflict = await send(t.port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers,
      body: '{"student":"achen","assignment":"lab4"}',
    });
    assert.equal(conflict.status, 422);
    assert.equal(t.logLines.at(-1)?.['outcome'], 'conflict');
  });

  it("the hook receiver's swallow drops the connection through the same adapter", async () => {
    const headers = {
      authorization: bearer(TOKENS.dev),
      'idempotency-key': 'run-9',
      'content-type': 'application/json',
    };
    await assert.rejects(
      send(t.port, {
        method: 'POST',
        path: '/hooks/run-complete',
        headers,
        body: '{"run_id":"run-9"}',
      }),
      /socket hang up|ECONNRESET/,
    );
    const retry = await send(t.port, {
      method: 'POST',
      path: '/hooks/run-complete',
      headers,
      body: '{"run_id":"run-9"}',
    });
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    const hits = (
      await send(t.port, {
        path: '/hooks/debug/hits',
        headers: { authorization: bearer(TOKENS.dev) },
      })
    ).json<{ hits: Array<{ answer: string }> }>();
    assert.deepEqual(
      hits.hits.map((h) => h.answer),
      ['swallowed', 'replayed'],
    );
    const hookLines = t.logLines.filter((l) => l['path'] === '/hooks/run-complete');
    assert.deepEqual(
      hookLines.map((l) => [l['outcome'], l['status']]),
      [
        ['new', null],
        ['replay', 200],
      ],
    );
  });

  it('notes are mounted on the same ledger: GET without a token, PATCH under a request ID, replayed', async () => {
    const note = await send(t.port, { path: '/notes/note-1' });
    assert.equal(note.status, 200);
    const { version } = note.json<{ version: number }>();
    const patch = () =>
      send(t.port, {
        method: 'PATCH',
        path: '/notes/note-1',
        headers: submissionHeaders(TOKENS.dev, 'edit-1'),
        body: JSON.stringify({ expectedVersion: version, title: 'Agenda, moved' }),
      });
    const first = await patch();
    assert.equal(first.status, 200, first.text);
    const again = await patch();
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(
      (await send(t.port, { path: '/notes/note-1' })).json<{ version: number }>().version,
      version + 1,
    );
    const receipts = (
      await send(t.port, {
        path: '/ledger/receipts',
        headers: { authorization: bearer(TOKENS.dev) },
      })
    ).json<{ receipts: Array<{ key: string }> }>();
    assert.ok(receipts.receipts.some((r) => r.key === 'edit-1'));
  });

  it('close() stops accepting, and the store is closed after', async () => {
    const other = await startTestServer();
    assert.equal((await send(other.port, { path: '/healthz' })).status, 200);
    await other.close();
    assert.equal(other.server.inFlight(), 0);
    await assert.rejects(send(other.port, { path: '/healthz' }), /ECONNREFUSED/);
  });
});
