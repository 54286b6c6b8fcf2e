// The one Content-Type rule of the JSON services (dropbox, notes): application/json with no
// charset or charset=utf-8, nothing else (RFC 8259 section 8.1).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROBLEM_JSON } from '../../src/contract/headers.js';
import { ACCEPTED_JSON_TYPES, isJsonMediaType, readJsonBody } from '../../src/http/json-body.js';

const ACCEPTED = [
  'application/json',
  'Application/JSON',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'APPLICATION/JSON ; CHARSET = Utf-8',
  'application/json; charset="UTF-8"',
];
const REFUSED = [
  null,
  '',
  'json',
  'text/json',
  'text/plain',
  'application/jsonx',
  'application/json; charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'application/json; charset=utf8',
  'application/json; charset=',
  'application/json; charset=utf-8; charset=latin1',
  'application/json; charset=utf-8; profile=x',
  'application/json; profile=x',
  'application/merge-patch+json',
  'application/vnd.api+json; charset=utf-8',
  'application/+json',
];

// Bytes, not a string: fetch would add text/plain to a string body sent without a Content-Type.
const request = (method: string, type: string | null, body = '{"a":1}'): Request =>
  new Request('http://json.test/x', { method, body: new TextEncoder().encode(body), headers: type === null ? {} : { 'content-type': type } });

describe('isJsonMediaType', () => {
  for (const type of ACCEPTED) it(`accepts ${JSON.stringify(type)}`, () => assert.equal(isJsonMediaType(type), true));
  for (const type of REFUSED) it(`refuses ${JSON.stringify(type)}`, () => assert.equal(isJsonMediaType(type), false));
});

describe('readJsonBody', () => {
  it('reads and parses a body under every accepted type', async () => {
    for (const type of ACCEPTED) {
      const read = await readJsonBody(request('POST', type), { maxBodyBytes: 64, what: 'thing' });
      assert.equal(read.kind, 'json', type);
      assert.deepEqual(read.kind === 'json' && read.value, { a: 1 });
    }
  });

  it('refuses any other type with 415 problem+json naming what is accepted, before reading the body', async () => {
    for (const [method, header] of [['POST', 'accept-post'], ['PATCH', 'accept-patch']] as const) {
      // The body is not even JSON: the type is judged first.
      const read = await readJsonBody(request(method, 'application/json; charset=latin1', '{not json'), { maxBodyBytes: 64, what: 'thing' });
      assert.equal(read.kind, 'refused');
      if (read.kind !== 'refused') return;
      assert.equal(read.response.status, 415);
      assert.equal(read.response.headers.get('content-type'), PROBLEM_JSON);
      assert.equal(read.response.headers.get(header), 'application/json, application/json; charset=utf-8');
      const problem = (await read.response.json()) as { code: string; detail: string; accepted: string[] };
      assert.equal(problem.code, 'unsupported_media_type');
      assert.deepEqual(problem.accepted, [...ACCEPTED_JSON_TYPES]);
      assert.match(problem.detail, /send the thing as application\/json \(no charset, or charset=utf-8\), not "application\/json; charset=latin1"/);
    }
    const missing = await readJsonBody(request('POST', null), { maxBodyBytes: 64, what: 'thing' });
    assert.ok(missing.kind === 'refused' && /without a Content-Type/.test(((await missing.response.json()) as { detail: string }).detail));
  });
});
