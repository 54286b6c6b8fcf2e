// The bad-input suite, over HTTP against a real server: every case is wrong in exactly
// one way, so nothing valid slips through. Every answer must be a 4xx problem+json; afterwards
// the server still answers its health check and the store (rows, receipts, hits, notes) is
// exactly as before.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  bearer,
  send,
  snapshot,
  startTestServer,
  submissionHeaders,
  TOKENS,
  type RawRequest,
  type TestServer,
} from './server-harness.js';

const VALID_BODY = '{"student":"achen","assignment":"lab3"}';
const KEY = 'bad-input-key-1';
const AUTH = { authorization: bearer(TOKENS.dev) };
const POST = (
  overrides: Partial<RawRequest> & { headers?: Record<string, string | undefined> },
): RawRequest => ({
  method: 'POST',
  path: '/dropbox/submissions',
  body: VALID_BODY,
  ...overrides,
  headers: { ...submissionHeaders(TOKENS.dev, KEY), ...overrides.headers },
});
const latin1 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

interface Case {
  readonly name: string;
  readonly request: RawRequest;
  /** The exact status, when one is the only right answer. */
  readonly status?: number;
}

// Idempotency keys: missing, blank, overlong, non-ASCII (sent as raw bytes), quoted-but-empty.
const BAD_KEYS: Array<[string, string | undefined]> = [
  ['missing', undefined],
  ['empty', ''],
  ['one space', ' '],
  ['spaces', '    '],
  ['a tab', '\t'],
  ['256 characters', 'k'.repeat(256)],
  ['1000 characters', 'k'.repeat(1000)],
  ['8000 characters', 'k'.repeat(8000)],
  ['latin1 é', 'clé'],
  ['UTF-8 Cyrillic bytes', latin1('ключ')],
  ['UTF-8 emoji bytes', latin1('key-🔑')],
  ['non-breaking space', 'a\u00a0b'],
  ['quoted empty', '""'],
  ['quoted blank', '"   "'],
  ['quoted overlong', `"${'q'.repeat(300)}"`],
];
const keyCases: Case[] = [
  ...BAD_KEYS.map(
    ([name, key]): Case => ({
      name: `dropbox key ${name}`,
      request: POST({ headers: { 'idempotency-key': key } }),
      status: 400,
    }),
  ),
  ...BAD_KEYS.map(
    ([name, key]): Case => ({
      name: `notes key ${name}`,
      request: {
        method: 'PATCH',
        path: '/notes/note-1',
        headers: { ...submissionHeaders(TOKENS.dev, 'x'), 'idempotency-key': key },
        body: '{"expectedVersion":1,"title":"changed"}',
      },
      status: 400,
    }),
  ),
  ...[
    ['blank', '%20%20'],
    ['overlong', 'k'.repeat(256)],
    ['non-ASCII', '%C3%A9t%C3%A9'],
    ['NUL', 'a%00b'],
    ['newline', 'a%0Ab'],
  ].map(
    ([name, key]): Case => ({
      name: `lookup key ${name}`,
      request: { path: `/dropbox/submissions/${key}`, headers: AUTH },
      status: 400,
    }),
  ),
];

// Bodies that are not JSON at all.
const jsonCases: Case[] = [
  ['empty body', ''],
  ['open brace', '{'],
  ['cut off', '{"student":'],
  ['bare word', 'nul'],
  ['undefined', 'undefined'],
  ['single quotes', "{'student':'achen','assignment':'lab3'}"],
  ['unquoted names', '{student:"achen",assignment:"lab3"}'],
  ['trailing comma', '{"student":"achen","assignment":"lab3",}'],
  ['trailing garbage', `${VALID_BODY}x`],
  ['two documents', '{"a":1}{"b":2}'],
  ['NaN', '{"student":NaN,"assignment":"lab3"}'],
  ['comment', `/* hi */ ${VALID_BODY}`],
].map(
  ([name, body]): Case => ({
    name: `json: ${name}`,
    request: POST({ body: body! }),
    status: 400,
  }),
);
jsonCases.push({
  name: 'json: invalid UTF-8',
  request: POST({ body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }),
  status: 400,
});

// Content types other than application/json with no charset or UTF-8 (RFC 8259 section 8.1): one
// rule for both JSON services, the dropbox and the notes.
const BAD_TYPES: Array<[string, string | undefined]> = [
  ['missing', undefined],
  ['empty', ''],
  ['text/plain', 'text/plain'],
  ['form', 'application/x-www-form-urlencoded'],
  ['multipart', 'multipart/form-data; boundary=xyz'],
  ['xml', 'application/xml'],
  ['text/json', 'text/json'],
  ['application/jsonx', 'application/jsonx'],
  ['json in latin1', 'application/json; charset=latin1'],
  ['json in UTF-16', 'application/json; charset=utf-16'],
  ['json with another parameter', 'application/json; profile=x'],
  ['merge-patch+json', 'application/merge-patch+json'],
  ['bare json', 'json'],
];
const typeCases: Case[] = [
  ...BAD_TYPES.map(
    ([name, type]): Case => ({
      name: `dropbox content type ${name}`,
      request: POST({ headers: { 'content-type': type } }),
      status: 415,
    }),
  ),
  ...BAD_TYPES.map(
    ([name, type]): Case => ({
      name: `notes content type ${name}`,
      request: {
        method: 'PATCH',
        path: '/notes/note-1',
        headers: { ...submissionHeaders(TOKENS.dev, 'notes-type-key'), 'content-type': type },
        body: '{"expectedVersion":1,"title":"changed"}',
      },
      status: 415,
    }),
  ),
];

// Bodies over the dropbox's 16 KiB limit, declared or streamed.
const padded = (bytes: number): string =>
  `{"student":"achen","assignment":"lab3"}${' '.repeat(bytes - VALID_BODY.length)}`;
const sizeCases: Case[] = [
  { name: 'size: 16 KiB + 1, declared', request: POST({ body: padded(16_385) }), status: 413 },
  {
    name: 'size: 100 kB, chunked',
    request: POST({ body: padded(100_000), chunked: true }),
    status: 413,
  },
  { name: 'size: 2 MB, declared', request: POST({ body: padded(2_000_000) }), status: 413 },
  {
    name: 'size: 1 MB, chunked',
    request: POST({ body: padded(1_000_000), chunked: true }),
    status: 413,
  },
  {
    name: 'size: one 20 kB field',
    request: POST({ body: JSON.stringify({ student: 's'.repeat(20_000), assignment: 'lab3' }) }),
    status: 413,
  },
];

// Well-formed JSON with missing, extra or wrongly typed fields.
const fieldCases: Case[] = [
  ['empty object', {}],
  ['array', []],
  ['null', null],
  ['number', 1],
  ['string', 'achen lab3'],
  ['boolean', true],
  ['no assignment', { student: 'achen' }],
  ['no student', { assignment: 'lab3' }],
  ['extra field', { student: 'achen', assignment: 'lab3', grade: 'A' }],
  ['__proto__ field', JSON.parse('{"student":"achen","assignment":"lab3","__proto__":{"x":1}}')],
  ['student a number', { student: 1, assignment: 'lab3' }],
  ['student null', { student: null, assignment: 'lab3' }],
  ['student an object', { student: {}, assignment: 'lab3' }],
  ['student an array', { student: ['achen'], assignment: 'lab3' }],
  ['student empty', { student: '', assignment: 'lab3' }],
  ['student blank', { student: '   ', assignment: 'lab3' }],
  ['assignment empty', { student: 'achen', assignment: '' }],
  ['student 129 characters', { student: 's'.repeat(129), assignment: 'lab3' }],
  ['student with NUL', { student: 'ach\u0000en', assignment: 'lab3' }],
  ['assignment with newline', { student: 'achen', assignment: 'lab\n3' }],
  ['student with line separator', { student: 'ach\u2028en', assignment: 'lab3' }],
  ['student with leading space', { student: ' achen', assignment: 'lab3' }],
  ['both booleans', { student: true, assignment: false }],
].map(
  ([name, value]): Case => ({
    name: `fields: ${name as string}`,
    request: POST({ body: JSON.stringify(value) }),
    status: 422,
  }),
);

// Paths and methods nobody serves (none under /hooks, where every path is a hook).
const routeCases: Case[] = [
  ['GET', '/nope', 404],
  ['POST', '/nope', 404],
  ['GET', '/dropbox', 404],
  ['GET', '/dropbox/', 404],
  ['GET', '/dropbox/store/extra', 404],
  ['GET', '/DROPBOX/STORE', 404],
  ['GET', '/dropbox//store', 404],
  ['POST', '/notes', 404],
  ['GET', '/../../etc/passwd', 404],
  ['GET', '/%2e%2e/%2e%2e/etc/passwd', 404],
  ['GET', '/..%2f..%2fpackage.json', 404],
  ['GET', '/package.json', 404],
  ['GET', '/apps/serve/pages.ts', 404],
  ['PROPFIND', '/', 404],
  ['GET', '/dropbox/submissions', 405],
  ['PUT', '/dropbox/submissions', 405],
  ['DELETE', '/dropbox/submissions', 405],
  ['PATCH', '/dropbox/submissions', 405],
  ['PUT', '/dropbox/submissions/some-key', 405],
  ['POST', '/dropbox/submissions/some-key', 405],
  ['POST', '/dropbox/store', 405],
  ['DELETE', '/dropbox/store', 405],
  ['POST', '/healthz', 405],
  ['DELETE', '/ledger/receipts', 405],
  ['PUT', '/store', 405],
  ['DELETE', '/notes/note-1', 405],
].map(
  ([method, path, status]): Case => ({
    name: `route ${method} ${path}`,
    request: { method: method as string, path: path as string, headers: AUTH },
    status: status as number,
  }),
);

// Tokens: missing, malformed, wrong, on every guarded route.
const BAD_AUTH: Array<[string, string | undefined]> = [
  ['no header', undefined],
  ['Bearer alone', 'Bearer'],
  ['Bearer and a space', 'Bearer '],
  ['unknown token', 'Bearer not-a-token-0123456789abcdef'],
  ['token without scheme', TOKENS.dev],
  ['Basic scheme', `Basic ${Buffer.from(`dev:${TOKENS.dev}`).toString('base64')}`],
  ['token plus a character', `Bearer ${TOKENS.dev}x`],
  ['token less a character', `Bearer ${TOKENS.dev.slice(0, -1)}`],
  ['token upper-cased', `Bearer ${TOKENS.dev.toUpperCase()}`],
];
const GUARDED: Array<[string, RawRequest]> = [
  ['POST /dropbox/submissions', POST({})],
  ['GET /dropbox/store', { path: '/dropbox/store' }],
  ['GET /dropbox/submissions/:key', { path: `/dropbox/submissions/${KEY}` }],
  ['GET /ledger/receipts', { path: '/ledger/receipts' }],
  [
    'POST /hooks/run-complete',
    {
      method: 'POST',
      path: '/hooks/run-complete',
      headers: { 'idempotency-key': 'hook-1', 'content-type': 'application/json' },
      body: '{"run_id":"run-9"}',
    },
  ],
  ['GET /hooks/debug/hits', { path: '/hooks/debug/hits' }],
  [
    'PATCH /notes/note-1',
    {
      method: 'PATCH',
      path: '/notes/note-1',
      headers: { 'idempotency-key': 'n-1', 'content-type': 'application/json' },
      body: '{"expectedVersion":1,"title":"changed"}',
    },
  ],
];
const authCases: Case[] = GUARDED.flatMap(([route, request]) =>
  BAD_AUTH.map(
    ([name, authorization]): Case => ({
      name: `auth ${route}: ${name}`,
      request: { ...request, headers: { ...request.headers, authorization } },
      status: 401,
    }),
  ),
);

const faultCases: Case[] = ['drop-everything', 'swallow', ''].map(
  (value): Case => ({
    name: `fault header ${JSON.stringify(value)}`,
    request: POST({ headers: { 'oncely-fault': value } }),
    status: 400,
  }),
);

// Row limits the listings refuse (1 to 1000, given once).
const limitCases: Case[] = ['/dropbox/store', '/ledger/receipts'].flatMap((path) =>
  ['0', '1001', '-1', '1.5', 'all', '', '10&limit=20'].map(
    (limit): Case => ({
      name: `limit ${path}?limit=${limit}`,
      request: { path: `${path}?limit=${limit}`, headers: AUTH },
      status: 400,
    }),
  ),
);

const ALL = [
  ...keyCases,
  ...limitCases,
  ...jsonCases,
  ...typeCases,
  ...sizeCases,
  ...fieldCases,
  ...routeCases,
  ...authCases,
  ...faultCases,
];

describe(`bad input over HTTP: ${ALL.length} cases, each a 4xx problem+json that changes nothing`, () => {
  let t: TestServer;
  let before_: unknown;
  let logStart = 0;

  before(async () => {
    t = await startTestServer();
    // One accepted submission first, so "unchanged" is checked against a store that holds something.
    const seeded = await send(t.port, POST({ headers: { 'idempotency-key': 'seeded-1' } }));
    assert.equal(seeded.status, 201, seeded.text);
    before_ = await snapshot(t.port, TOKENS.dev);
    logStart = t.logLines.length;
  });
  after(() => t.close());

  it('has at least 100 cases', () => assert.ok(ALL.length >= 100, `${ALL.length} cases`));

  for (const c of ALL) {
    it(c.name, async () => {
      const response = await send(t.port, c.request);
      assert.ok(
        response.status >= 400 && response.status < 500,
        `status ${response.status}: ${response.text.slice(0, 200)}`,
      );
      if (c.status !== undefined)
        assert.equal(response.status, c.status, response.text.slice(0, 200));
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const problem = response.json<{
        type: unknown;
        title: unknown;
        status: unknown;
        detail: unknown;
      }>();
      assert.equal(problem.status, response.status);
      for (const member of ['type', 'title', 'detail'] as const)
        assert.equal(typeof problem[member], 'string', `${member} in ${response.text}`);
      if (response.status === 401)
        assert.match(String(response.headers['www-authenticate'] ?? ''), /^Bearer/);
      if (response.status === 405)
        assert.ok(response.headers['allow'], 'a 405 names the allowed methods');
      if (response.status === 415)
        assert.deepEqual(
          response.json<{ accepted: unknown }>().accepted,
          ['application/json', 'application/json; charset=utf-8'],
          'a 415 names what is accepted',
        );
    });
  }

  it('node-level garbage (a bad request line) is a 400 problem+json too', async () => {
    const { connect } = await import('node:net');
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(t.port, '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 400 /);
    assert.match(raw, /content-type: application\/problem\+json/i);
    assert.equal(
      (JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { status: number }).status,
      400,
    );
  });

  it('afterwards the server is up, the store is unchanged and no request reached the ledger as new', async () => {
    const health = await send(t.port, { path: '/healthz' });
    assert.equal(health.status, 200);
    assert.deepEqual(await snapshot(t.port, TOKENS.dev), before_);
    const outcomes = new Set(t.logLines.slice(logStart).map((line) => line['outcome']));
    assert.deepEqual([...outcomes], ['none']);
  });
});
