// Hostile callers: missing, wrong and misplaced tokens, keys at and past the 255-character limit,
// and one caller reaching for another's keys, rows and receipts. Each is a 4xx problem+json that
// changes nothing, and nobody learns anything about alice's requests but alice.
import assert from 'node:assert/strict';
import { bearer, submissionHeaders, TOKENS, type RawRequest } from '../server-harness.js';
import {
  auth,
  describeHostile,
  LAB3,
  rawRequest,
  SEEDED,
  type HostileCase,
} from './hostile-harness.js';

const submit = (
  headers: Record<string, string | undefined>,
  body = LAB3,
  path = '/dropbox/submissions',
): RawRequest => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', ...headers },
  body,
});
const key255 = 'k'.repeat(255);
const key256 = 'k'.repeat(256);

// Tokens: missing, malformed, wrong, in the wrong place (RFC 6750 section 2.3's query form is not taken).
const BAD_AUTH: Array<[string, string | undefined]> = [
  ['no header', undefined],
  ['an empty header', ''],
  ['Bearer alone', 'Bearer'],
  ['a wrong token', 'Bearer wrong-token-0123456789abcdef'],
  ['two tokens', `Bearer ${TOKENS.dev} ${TOKENS.alice}`],
  ['alice token prefixed to dev', `Bearer ${TOKENS.alice}${TOKENS.dev}`],
  ['the token as Basic', `Basic ${Buffer.from(`:${TOKENS.dev}`).toString('base64')}`],
  ['the scheme only in lowercase and no space', `bearer${TOKENS.dev}`],
];
const authCases: HostileCase[] = [
  ...BAD_AUTH.map(
    ([name, authorization]): HostileCase => ({
      name: `submit with ${name}`,
      send: submit({ authorization, 'idempotency-key': 'auth-1' }),
      status: 401,
    }),
  ),
  ...BAD_AUTH.slice(0, 5).map(
    ([name, authorization]): HostileCase => ({
      name: `read receipts with ${name}`,
      send: { path: '/ledger/receipts', headers: { authorization } },
      status: 401,
    }),
  ),
  ...[
    ['/dropbox/store?access_token=', '/dropbox/store'],
    ['/ledger/receipts?access_token=', '/ledger/receipts'],
    ['/hooks/debug/hits?access_token=', '/hooks/debug/hits'],
    ['/dropbox/store?token=', '/dropbox/store'],
    [`/dropbox/submissions/${SEEDED.aliceKey}?access_token=`, "alice's lookup"],
  ].map(
    ([prefix, what]): HostileCase => ({
      name: `a token in the query string of ${what}`,
      send: { path: `${prefix}${TOKENS.alice}` },
      status: 401,
    }),
  ),
  {
    name: 'a token in the query string of a submission',
    send: submit(
      { 'idempotency-key': 'auth-q' },
      LAB3,
      `/dropbox/submissions?access_token=${TOKENS.dev}`,
    ),
    status: 401,
  },
  {
    name: 'a token in a form body',
    send: {
      method: 'POST',
      path: '/dropbox/submissions',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'auth-f' },
      body: `access_token=${TOKENS.dev}`,
    },
    status: 401,
  },
  {
    name: 'a token in a cookie',
    send: submit({ cookie: `token=${TOKENS.dev}`, 'idempotency-key': 'auth-c' }),
    status: 401,
  },
  {
    name: 'a token in X-Api-Key',
    send: submit({ 'x-api-key': TOKENS.dev, 'idempotency-key': 'auth-x' }),
    status: 401,
  },
];

// Keys: 255 characters is the longest allowed; 256 is refused everywhere, before anything is stored.
const keyCases: HostileCase[] = [
  {
    name: 'a 256-character key on the dropbox',
    send: submit({ ...auth(TOKENS.dev), 'idempotency-key': key256 }),
    status: 400,
  },
  {
    name: 'a 256-character key on the notes',
    send: {
      method: 'PATCH',
      path: '/notes/note-1',
      headers: submissionHeaders(TOKENS.dev, key256),
      body: '{"expectedVersion":2,"title":"t"}',
    },
    status: 400,
  },
  {
    name: 'a 256-character key on a hook',
    send: submit({ ...auth(TOKENS.dev), 'idempotency-key': key256 }, '{}', '/hooks/run-complete'),
    status: 400,
  },
  {
    name: 'a 256-character key in a lookup',
    send: { path: `/dropbox/submissions/${key256}`, headers: auth(TOKENS.dev) },
    status: 400,
  },
  {
    name: 'a 255-character key nobody sent: never seen',
    send: { path: `/dropbox/submissions/${key255}`, headers: auth(TOKENS.dev) },
    status: 404,
  },
  {
    name: 'a 255-character key with no token',
    send: submit({ 'idempotency-key': key255 }),
    status: 401,
  },
  {
    name: 'a 255-character key with a malformed body',
    send: submit({ ...auth(TOKENS.dev), 'idempotency-key': key255 }, '{"student":'),
    status: 400,
  },
  {
    name: 'a 255-character key with a tab in the middle',
    send: submit({
      ...auth(TOKENS.dev),
      'idempotency-key': `${'k'.repeat(127)}\t${'k'.repeat(127)}`,
    }),
    status: 400,
  },
  {
    name: 'a key of 255 spaces',
    send: submit({ ...auth(TOKENS.dev), 'idempotency-key': ' '.repeat(255) }),
    status: 400,
  },
  // Bytes a fetch client refuses to send, written by hand: node's parser or the key check refuses them.
  {
    name: 'a key with a DEL character',
    send: rawRequest(
      'POST /dropbox/submissions HTTP/1.1',
      [
        'Host: 127.0.0.1',
        `Authorization: Bearer ${TOKENS.dev}`,
        'Content-Type: application/json',
        'Idempotency-Key: key\u007f1',
        `Content-Length: ${LAB3.length}`,
      ],
      LAB3,
    ),
  },
  {
    name: 'a key with a NUL',
    send: rawRequest(
      'POST /dropbox/submissions HTTP/1.1',
      [
        'Host: 127.0.0.1',
        `Authorization: Bearer ${TOKENS.dev}`,
        'Content-Type: application/json',
        'Idempotency-Key: key\u00001',
        `Content-Length: ${LAB3.length}`,
      ],
      LAB3,
    ),
    status: 400,
  },
  {
    name: 'a token with a NUL',
    send: rawRequest('GET /ledger/receipts HTTP/1.1', [
      'Host: 127.0.0.1',
      `Authorization: Bearer ${TOKENS.dev.slice(0, 8)}\u0000${TOKENS.dev.slice(8)}`,
    ]),
    status: 400,
  },
];

// Cross-caller: bob and dev reaching for alice's key, rows and receipts. A lookup says never
// seen (not "someone else's"); a request under her key with a bad body is refused like any other.
const neverSeen = (response: { json: <T>() => T; text: string }): void => {
  assert.equal(response.json<{ lookup?: string }>().lookup, 'never_seen');
  // Nothing of alice's request shows: not its body, not when it came.
  assert.ok(
    !response.text.includes('lab1') && !response.text.includes('firstSeenAt'),
    response.text,
  );
};
const crossCases: HostileCase[] = [
  {
    name: "bob looks up alice's submission",
    send: { path: `/dropbox/submissions/${SEEDED.aliceKey}`, headers: auth(TOKENS.bob) },
    status: 404,
    check: neverSeen,
  },
  {
    name: "dev looks up alice's submission",
    send: { path: `/dropbox/submissions/${SEEDED.aliceKey}`, headers: auth(TOKENS.dev) },
    status: 404,
    check: neverSeen,
  },
  {
    name: "bob looks up alice's hook key as a submission",
    send: { path: `/dropbox/submissions/${SEEDED.aliceHookKey}`, headers: auth(TOKENS.bob) },
    status: 404,
    check: neverSeen,
  },
  {
    name: "bob looks up alice's note request ID",
    send: { path: `/dropbox/submissions/${SEEDED.aliceNoteKey}`, headers: auth(TOKENS.bob) },
    status: 404,
    check: neverSeen,
  },
  {
    name: "bob replays alice's submission without a token",
    send: submit({ 'idempotency-key': SEEDED.aliceKey }, '{"student":"alice","assignment":"lab1"}'),
    status: 401,
  },
  {
    name: "bob replays alice's submission with alice's token in the query",
    send: submit(
      { 'idempotency-key': SEEDED.aliceKey },
      '{"student":"alice","assignment":"lab1"}',
      `/dropbox/submissions?access_token=${TOKENS.alice}`,
    ),
    status: 401,
  },
  {
    name: "bob replays alice's submission with a malformed body",
    send: submit({ ...auth(TOKENS.bob), 'idempotency-key': SEEDED.aliceKey }, '{"student":"alice"'),
    status: 400,
  },
  {
    name: "bob replays alice's submission as text/plain",
    send: submit(
      { ...auth(TOKENS.bob), 'idempotency-key': SEEDED.aliceKey, 'content-type': 'text/plain' },
      '{"student":"alice","assignment":"lab1"}',
    ),
    status: 415,
  },
  {
    name: "bob replays alice's note edit with a stale shape",
    send: {
      method: 'PATCH',
      path: '/notes/note-1',
      headers: submissionHeaders(TOKENS.bob, SEEDED.aliceNoteKey),
      body: '{"expectedVersion":1}',
    },
    status: 422,
  },
  {
    name: "bob replays alice's note edit without a token",
    send: {
      method: 'PATCH',
      path: '/notes/note-1',
      headers: { 'idempotency-key': SEEDED.aliceNoteKey, 'content-type': 'application/json' },
      body: '{"expectedVersion":1,"title":"seeded"}',
    },
    status: 401,
  },
  {
    name: "bob replays alice's hook without a token",
    send: submit(
      { 'idempotency-key': SEEDED.aliceHookKey },
      '{"run_id":"run-1"}',
      '/hooks/run-complete',
    ),
    status: 401,
  },
  {
    name: "bob reads the receipts with alice's token as Basic",
    send: {
      path: '/ledger/receipts',
      headers: {
        authorization: `Basic ${Buffer.from(`alice:${TOKENS.alice}`).toString('base64')}`,
      },
    },
    status: 401,
  },
  {
    name: "bob clears alice's hook hits without a token",
    send: { method: 'DELETE', path: '/hooks/debug/hits' },
    status: 401,
  },
  {
    name: 'a caller name as a token',
    send: { path: '/ledger/receipts', headers: { authorization: bearer('alice') } },
    status: 401,
  },
];

describeHostile('hostile callers', [...authCases, ...keyCases, ...crossCases]);
