// The hostile corpus's runner: one server per file, seeded with rows, receipts, hook hits and a
// note edit by three callers; every case must be answered 4xx problem+json, leave every row of
// the database exactly as it was, and leave the server answering /healthz. Each caller's view of
// the store, read through the API, is the same before the first case and after the last.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { ServerOptions } from '#cli/serve/start-server.js';
import { HOOK_HITS_TABLE } from '#cli/receivers/hook/hook-hits-table.js';
import {
  bearer,
  send,
  snapshot,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type RawRequest,
  type RawResponse,
  type TestServer,
} from '../server-harness.js';

/** One hostile request: what is sent, and what must come back besides "4xx problem+json, nothing changed". */
export interface HostileCase {
  readonly name: string;
  /** A request for the harness client; raw bytes on a fresh connection; or a driver of its own. */
  readonly send:
    | RawRequest
    | { readonly raw: string | Uint8Array }
    | ((port: number) => Promise<RawResponse>);
  /** The exact status, where only one is right. */
  readonly status?: number;
  /** More to check of the answer. */
  readonly check?: (response: RawResponse) => void;
}

export const LAB3 = '{"student":"achen","assignment":"lab3"}';
/** Keys the seeding used: alice's, which the other callers must never reach. */
export const SEEDED = {
  aliceKey: 'alice-seeded-1',
  devKey: 'dev-seeded-1',
  aliceHookKey: 'alice-hook-1',
  aliceNoteKey: 'alice-note-1',
} as const;

/** Runs `cases` against a fresh server built with `options`; `concurrency` for cases that wait on timeouts. */
export function describeHostile(
  title: string,
  cases: readonly HostileCase[],
  options: { server?: Partial<ServerOptions>; concurrency?: boolean } = {},
): void {
  describe(`${title}: ${cases.length} hostile cases, each a 4xx problem+json that changes nothing`, {
    concurrency: options.concurrency ?? false,
  }, () => {
    let t: TestServer;
    let baseline: unknown;
    let baselineRows: unknown;
    before(async () => {
      t = await startTestServer(options.server);
      await seed(t.port);
      baseline = await storeView(t.port);
      baselineRows = await storeRows(t);
    });
    after(async () => {
      try {
        assert.deepEqual(await storeView(t.port), baseline, "a caller's view changed");
      } finally {
        await t.close();
      }
    });

    for (const c of cases) {
      it(c.name, async () => {
        const response = await (typeof c.send === 'function'
          ? c.send(t.port)
          : 'raw' in c.send
            ? sendRaw(t.port, c.send.raw)
            : send(t.port, c.send));
        assertProblem(response, c.status);
        c.check?.(response);
        const health = await send(t.port, { path: '/healthz' });
        assert.equal(health.status, 200, `healthz after the case: ${health.text}`);
        assert.deepEqual(await storeRows(t), baselineRows, 'the store changed');
      });
    }
  });
}

/** A 4xx whose body is problem+json with the same status. */
export function assertProblem(response: RawResponse, status?: number): void {
  const head = `${response.status}: ${response.text.slice(0, 300)}`;
  assert.ok(response.status >= 400 && response.status < 500, head);
  if (status !== undefined) assert.equal(response.status, status, head);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, head);
  const problem = response.json<{
    status: unknown;
    title: unknown;
    type: unknown;
    detail: unknown;
  }>();
  assert.equal(problem.status, response.status);
  for (const member of ['type', 'title', 'detail'] as const)
    assert.equal(typeof problem[member], 'string', `${member} in ${response.text}`);
  if (response.status === 405)
    assert.ok(response.headers['allow'], 'a 405 names the allowed methods');
  if (response.status === 401)
    assert.match(String(response.headers['www-authenticate'] ?? ''), /^Bearer/);
}

/**
 * What every caller can see: rows, receipts and hook completions of dev, alice and bob, and the
 * notes. Not the hook receiver's arrival log: it records every arrival, refused ones included
 * (a body too large is logged `too_large`, by design), so a refusal shows there and nowhere else.
 */
async function storeView(port: number): Promise<unknown> {
  // The notes once: they are read without a token, so every caller sees the same.
  const views = await Promise.all(
    [TOKENS.dev, TOKENS.alice, TOKENS.bob].map(
      (token, i) =>
        snapshot(port, token, { notes: i === 0 }) as Promise<{
          hooks: { body: Record<string, unknown> };
        }>,
    ),
  );
  return views.map((view) => ({
    ...view,
    hooks: { completions: view.hooks.body['completions'], replays: view.hooks.body['replays'] },
  }));
}

/**
 * Every row of every table of the server's database, read in one transaction of its own: the
 * ledger's receipts and tombstones, the services' rows, the notes. Stricter than the callers'
 * views (it sees columns and rows no route shows) and a fraction of their cost: a dozen requests
 * per case made the views most of the corpus's time. The hook receiver's arrivals are left out
 * but those that did the work or replayed it (what the views count): a refused arrival is logged
 * by design (a body too large is logged `too_large`).
 */
async function storeRows(t: TestServer): Promise<unknown> {
  const { backend } = t.server;
  assert.equal(backend.kind, 'sqlite', 'the corpus reads the SQLite catalogue');
  return backend.db.transaction(async (sql) => {
    const tables = await sql.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    );
    const rows: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      const where =
        name === HOOK_HITS_TABLE ? " WHERE answer IN ('completed', 'swallowed', 'replayed')" : '';
      // Sorted here: a scan's order is the table's, and some tables have no rowid to sort by.
      const all = await sql.all(`SELECT * FROM "${name}"${where}`);
      rows[name] = all.map((row) => JSON.stringify(row)).sort();
    }
    return rows;
  });
}

/** Something to protect: an accepted submission by dev and by alice, a hook completion and a note edit by alice. */
async function seed(port: number): Promise<void> {
  const answers = await Promise.all([
    send(port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.dev, SEEDED.devKey),
      body: LAB3,
    }),
    send(port, {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: submissionHeaders(TOKENS.alice, SEEDED.aliceKey),
      body: '{"student":"alice","assignment":"lab1"}',
    }),
    send(port, {
      method: 'POST',
      path: '/hooks/run-complete',
      headers: submissionHeaders(TOKENS.alice, SEEDED.aliceHookKey),
      body: '{"run_id":"run-1"}',
    }),
  ]);
  for (const answer of answers)
    assert.ok(answer.status === 201 || answer.status === 200, answer.text);
  const note = await send(port, {
    method: 'PATCH',
    path: '/notes/note-1',
    headers: submissionHeaders(TOKENS.alice, SEEDED.aliceNoteKey),
    body: '{"expectedVersion":1,"title":"seeded"}',
  });
  assert.equal(note.status, 200, note.text);
}

/**
 * Sends bytes on a fresh connection and reads the answer until the server closes it (every raw
 * case asks for `Connection: close`, and every refusal closes). Rejects on a reset.
 */
export function sendRaw(port: number, bytes: string | Uint8Array): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => {
      // Written, not ended: node's server answers nothing on a connection the client half-closed.
      socket.write(bytes);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** An HTTP/1.1 response from its bytes: status line, headers, a body by length or chunks. */
export function parseResponse(bytes: Buffer): RawResponse {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0)
    throw new Error(
      `no complete answer: ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`,
    );
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (let at = 0; ; ) {
      const lineEnd = body.indexOf('\r\n', at);
      const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (!(size > 0)) break;
      parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  const text = body.toString('utf8');
  return { status, headers, text, json: <T>() => JSON.parse(text) as T };
}

/** A request written by hand, closing the connection after the answer. */
export function rawRequest(
  requestLine: string,
  headers: readonly string[] = ['Host: 127.0.0.1'],
  body = '',
): { raw: string } {
  return {
    raw: `${requestLine}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`,
  };
}

export const auth = (token: string): Record<string, string> => ({ authorization: bearer(token) });
