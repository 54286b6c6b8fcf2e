// Hostile bodies for the JSON services (dropbox and notes) and the hook receiver: JSON that means
// two things (repeated names, lone surrogates), deep nesting, NUL and invalid UTF-8, __proto__
// keys, oversized bodies, and thousands of wrong fields. Each is a 4xx problem+json before the
// ledger: no row, no receipt, no edit.
import assert from 'node:assert/strict';
import { submissionHeaders, TOKENS, type RawRequest } from '../server-harness.js';
import { describeHostile, type HostileCase } from './hostile-harness.js';

const dropbox = (body: string | Uint8Array, extra: Partial<RawRequest> = {}): RawRequest => ({
  method: 'POST',
  path: '/dropbox/submissions',
  headers: submissionHeaders(TOKENS.dev, 'json-hostile-1'),
  body,
  ...extra,
});
const notes = (body: string | Uint8Array, extra: Partial<RawRequest> = {}): RawRequest => ({
  method: 'PATCH',
  path: '/notes/note-1',
  headers: submissionHeaders(TOKENS.dev, 'json-hostile-2'),
  body,
  ...extra,
});
const hook = (body: string | Uint8Array, extra: Partial<RawRequest> = {}): RawRequest => ({
  method: 'POST',
  path: '/hooks/run-complete',
  headers: submissionHeaders(TOKENS.dev, 'json-hostile-3'),
  body,
  ...extra,
});
const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const names = (response: { json: <T>() => T }): unknown =>
  response.json<{ member?: unknown }>().member;

// RFC 8259 section 4: names SHOULD be unique; a receiver that keeps the last would give two
// different bodies one fingerprint. Refused 400, naming the member.
const duplicateCases: HostileCase[] = [
  ['dropbox', dropbox('{"student":"first","student":"second","assignment":"lab3"}'), 'student'],
  ['dropbox', dropbox('{"student":"achen","assignment":"lab3","assignment":"lab4"}'), 'assignment'],
  [
    'dropbox',
    dropbox('{"student":"achen","\\u0073tudent":"bchen","assignment":"lab3"}'),
    'student',
  ],
  ['dropbox', dropbox('{"student":"achen","assignment":"lab3","x":{"a":1,"a":2}}'), 'a'],
  [
    'dropbox',
    dropbox('{"__proto__":{},"__proto__":{},"student":"achen","assignment":"lab3"}'),
    '__proto__',
  ],
  ['dropbox', dropbox('{"student":"achen","assignment":"lab3","student":"achen"}'), 'student'],
  ['notes', notes('{"expectedVersion":2,"expectedVersion":1,"title":"t"}'), 'expectedVersion'],
  ['notes', notes('{"expectedVersion":2,"title":"a","title":"b"}'), 'title'],
  ['notes', notes('{"expectedVersion":2,"title":"a","extra":[{"k":1,"k":1}]}'), 'k'],
].map(
  ([service, request, member]): HostileCase => ({
    name: `${service as string}: the member ${member as string} twice`,
    send: request as RawRequest,
    status: 400,
    check: (response) => assert.equal(names(response), member),
  }),
);

// Lone surrogates: JSON.parse takes them, canonical JSON (RFC 8785) cannot; once a 500.
const surrogateCases: HostileCase[] = [
  ['dropbox', dropbox('{"student":"a\\ud800","assignment":"lab3"}')],
  ['dropbox', dropbox('{"student":"\\udc00","assignment":"lab3"}')],
  ['dropbox', dropbox('{"student":"achen","assignment":"\\ude00\\ud83d"}')],
  ['dropbox', dropbox('{"\\ud800":1,"student":"achen","assignment":"lab3"}')],
  ['dropbox', dropbox('{"student":"achen","assignment":"lab3","x":["\\udbff"]}')],
  ['notes', notes('{"expectedVersion":2,"title":"a\\ud800"}')],
  ['notes', notes('{"expectedVersion":2,"title":"\\udfff\\udfff"}')],
  ['notes', notes('{"\\udc01":2,"title":"t"}')],
].map(
  ([service, request], index): HostileCase => ({
    name: `${service as string}: lone surrogate ${index + 1}`,
    send: request as RawRequest,
    status: 400,
  }),
);

// Nesting: refused at 65 levels, and a 16 KiB body of brackets costs no stack.
const nest = (depth: number, open = '[', close = ']'): string =>
  open.repeat(depth) + close.repeat(depth);
const depthCases: HostileCase[] = [
  { name: 'dropbox: 65 nested arrays', send: dropbox(nest(65)), status: 400 },
  { name: 'dropbox: 8,000 nested arrays', send: dropbox(nest(8000)), status: 400 },
  {
    name: 'dropbox: 2,500 nested objects',
    send: dropbox(`${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}`),
    status: 400,
  },
  {
    name: 'dropbox: deep inside a valid submission',
    send: dropbox(`{"student":"achen","assignment":"lab3","x":${nest(200)}}`),
    status: 400,
  },
  { name: 'notes: 8,000 nested arrays', send: notes(nest(8000)), status: 400 },
  {
    name: 'notes: deep title',
    send: notes(`{"expectedVersion":2,"title":${nest(100)}}`),
    status: 400,
  },
  { name: 'dropbox: 8,000 unclosed arrays', send: dropbox('['.repeat(8000)), status: 400 },
];

// NUL and invalid UTF-8 (RFC 3629 section 3): overlong forms, lone continuation bytes, encoded surrogates.
const byteCases: HostileCase[] = [
  ['a raw NUL in the text', dropbox(utf8('{"student":"ach\u0000en","assignment":"lab3"}')), 400],
  ['an escaped NUL in a field', dropbox('{"student":"ach\\u0000en","assignment":"lab3"}'), 422],
  [
    'a NUL byte before the JSON',
    dropbox(bytes(0, ...utf8('{"student":"achen","assignment":"lab3"}'))),
    400,
  ],
  ['0xFF', dropbox(bytes(0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d)), 400],
  ['an overlong slash C0 AF', dropbox(bytes(0x22, 0xc0, 0xaf, 0x22)), 400],
  ['an overlong NUL C0 80', dropbox(bytes(0x22, 0xc0, 0x80, 0x22)), 400],
  ['a lone continuation byte', dropbox(bytes(0x22, 0x80, 0x22)), 400],
  ['a cut 3-byte sequence', dropbox(bytes(0x22, 0xe2, 0x82, 0x22)), 400],
  ['a UTF-8-encoded surrogate ED A0 80', dropbox(bytes(0x22, 0xed, 0xa0, 0x80, 0x22)), 400],
  ['a code point past U+10FFFF', dropbox(bytes(0x22, 0xf4, 0x90, 0x80, 0x80, 0x22)), 400],
  [
    'UTF-16 text',
    dropbox(new Uint8Array(Buffer.from('{"student":"achen","assignment":"lab3"}', 'utf16le'))),
    400,
  ],
  [
    'notes: invalid UTF-8 in the title',
    notes(bytes(...utf8('{"expectedVersion":2,"title":"'), 0xc3, 0x28, ...utf8('"}'))),
    400,
  ],
  ['notes: a raw NUL', notes(utf8('{"expectedVersion":2,"title":"a\u0000"}')), 400],
  ['notes: an escaped NUL in the title', notes('{"expectedVersion":2,"title":"a\\u0000b"}'), 422],
].map(
  ([name, request, status]): HostileCase => ({
    name: `bytes: ${name as string}`,
    send: request as RawRequest,
    status: status as number,
  }),
);

// Prototype keys: data like any other, refused as unknown fields, never merged into anything.
const protoCases: HostileCase[] = [
  [
    'dropbox __proto__ carrying the fields',
    dropbox('{"__proto__":{"student":"achen","assignment":"lab3"}}'),
  ],
  [
    'dropbox __proto__ beside the fields',
    dropbox('{"student":"achen","assignment":"lab3","__proto__":{"admin":true}}'),
  ],
  [
    'dropbox constructor.prototype',
    dropbox('{"student":"achen","assignment":"lab3","constructor":{"prototype":{"x":1}}}'),
  ],
  ['dropbox __proto__ null', dropbox('{"student":"achen","assignment":"lab3","__proto__":null}')],
  [
    'notes __proto__ carrying the version',
    notes('{"__proto__":{"expectedVersion":2},"title":"t"}'),
  ],
  ['notes toString', notes('{"expectedVersion":2,"title":"t","toString":1}')],
].map(
  ([name, request]): HostileCase => ({
    name: `proto: ${name as string}`,
    send: request as RawRequest,
    status: 422,
  }),
);

// Sizes: the dropbox and notes take 16 KiB, a hook 1 MiB; past it 413, declared or streamed.
const pad = (bytes: number): string =>
  `{"student":"achen","assignment":"lab3"}${' '.repeat(bytes - 39)}`;
const sizeCases: HostileCase[] = [
  { name: 'size: dropbox 16 KiB + 1 declared', send: dropbox(pad(16_385)), status: 413 },
  {
    name: 'size: dropbox 200 kB chunked',
    send: dropbox(pad(200_000), { chunked: true }),
    status: 413,
  },
  {
    name: 'size: notes 16 KiB + 1 declared',
    send: notes(`{"expectedVersion":2,"title":"t"}${' '.repeat(16_384)}`),
    status: 413,
  },
  {
    name: 'size: notes 100 kB chunked',
    send: notes(`{"expectedVersion":2,"title":"t"}${' '.repeat(100_000)}`, { chunked: true }),
    status: 413,
  },
  { name: 'size: hook 1 MiB + 1 declared', send: hook('x'.repeat(1_048_577)), status: 413 },
  {
    name: 'size: hook 2 MB chunked',
    send: hook('x'.repeat(2_000_000), { chunked: true }),
    status: 413,
  },
];

// Answers sized to the mistakes: 1,600 unknown fields once got a 172 KB 422.
const manyFields = `{${Array.from({ length: 1600 }, (_, i) => `"f${i}":1`).join(',')}}`;
const capped = (response: { text: string; json: <T>() => T }): void => {
  assert.ok(response.text.length < 4096, `${response.text.length} bytes`);
  const problem = response.json<{ errors: unknown[]; errorCount: number }>();
  assert.ok(problem.errors.length <= 20, `${problem.errors.length} errors listed`);
  assert.ok(problem.errorCount >= problem.errors.length);
};
const fieldCases: HostileCase[] = [
  {
    name: 'fields: dropbox 1,600 unknown fields, at most 20 listed',
    send: dropbox(manyFields),
    status: 422,
    check: capped,
  },
  {
    name: 'fields: notes 1,600 unknown fields, the names cut',
    send: notes(manyFields),
    status: 422,
    check: capped,
  },
  {
    name: 'fields: dropbox one 10,000-character unknown name',
    send: dropbox(JSON.stringify({ ['n'.repeat(10_000)]: 1, student: 'a', assignment: 'b' })),
    status: 422,
    check: capped,
  },
  {
    name: 'fields: notes expectedVersion 1e400',
    send: notes('{"expectedVersion":1e400,"title":"t"}'),
    status: 422,
  },
  {
    name: 'fields: notes expectedVersion 2^64',
    send: notes('{"expectedVersion":18446744073709551616,"title":"t"}'),
    status: 422,
  },
  {
    name: 'fields: notes expectedVersion 1.5',
    send: notes('{"expectedVersion":1.5,"title":"t"}'),
    status: 422,
  },
  {
    name: 'fields: notes expectedVersion "2"',
    send: notes('{"expectedVersion":"2","title":"t"}'),
    status: 422,
  },
];

describeHostile('hostile bodies', [
  ...duplicateCases,
  ...surrogateCases,
  ...depthCases,
  ...byteCases,
  ...protoCases,
  ...sizeCases,
  ...fieldCases,
]);
