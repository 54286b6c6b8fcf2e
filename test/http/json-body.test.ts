// The one Content-Type rule of the JSON services (dropbox, notes): application/json with no
// charset or charset=utf-8, nothing else (RFC 8259 section 8.1).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROBLEM_JSON } from '#oncely/contract/headers.js';
import { ACCEPTED_JSON_TYPES, isJsonMediaType, jsonValidator } from '#oncely/http/json-body.js';
import { defineProblem } from '#oncely/http/problem.js';
import type { Validation } from '#oncely/http/request-validation.js';

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
  new Request('http://json.test/x', {
    method,
    body: new TextEncoder().encode(body),
    headers: type === null ? {} : { 'content-type': type },
  });

describe('isJsonMediaType', () => {
  for (const type of ACCEPTED)
    it(`accepts ${JSON.stringify(type)}`, () => assert.equal(isJsonMediaType(type), true));
  for (const type of REFUSED)
    it(`refuses ${JSON.stringify(type)}`, () => assert.equal(isJsonMediaType(type), false));
});

const validate = jsonValidator<unknown>({
  what: 'thing',
  invalid: defineProblem('invalid_thing', 422, 'Invalid thing'),
  check: (value) =>
    typeof value === 'object' && value !== null && 'a' in value
      ? { ok: true, value }
      : { ok: false, errors: ['a is missing', 'b too'] },
});
const run = async (request: Request): Promise<Validation<unknown>> =>
  validate({ request, scope: 'alice', body: new Uint8Array(await request.arrayBuffer()) });

describe('jsonValidator', () => {
  it('parses and checks a body under every accepted type', async () => {
    for (const type of ACCEPTED) {
      const read = await run(request('POST', type));
      assert.equal(read.ok, true, type);
      assert.deepEqual(read.ok && read.value, { a: 1 });
    }
  });

  it('refuses any other type with 415 problem+json naming what is accepted, whatever the body', async () => {
    for (const [method, header] of [
      ['POST', 'accept-post'],
      ['PATCH', 'accept-patch'],
    ] as const) {
      // The body is not even JSON: the type is judged first.
      const read = await run(request(method, 'application/json; charset=latin1', '{not json'));
      assert.equal(read.ok, false);
      if (read.ok) return;
      assert.equal(read.response.status, 415);
      assert.equal(read.response.headers.get('content-type'), PROBLEM_JSON);
      assert.equal(
        read.response.headers.get(header),
        'application/json, application/json; charset=utf-8',
      );
      const problem = (await read.response.json()) as {
        code: string;
        detail: string;
        accepted: string[];
      };
      assert.equal(problem.code, 'unsupported_media_type');
      assert.deepEqual(problem.accepted, [...ACCEPTED_JSON_TYPES]);
      assert.match(
        problem.detail,
        /send the thing as application\/json \(no charset, or charset=utf-8\), not "application\/json; charset=latin1"/,
      );
    }
    const missing = await run(request('POST', null));
    assert.ok(
      !missing.ok &&
        /without a Content-Type/.test(
          ((await missing.response.json()) as { detail: string }).detail,
        ),
    );
  });

  it("answers 400 for bytes that are not UTF-8 JSON and the service's 422, listing every error, for a value its check refuses", async () => {
    const broken = await run(request('POST', 'application/json', '{"a":'));
    assert.ok(!broken.ok && broken.response.status === 400);
    const refused = await run(request('POST', 'application/json', '{"c":1}'));
    assert.ok(!refused.ok);
    if (refused.ok) return;
    assert.equal(refused.response.status, 422);
    const problem = (await refused.response.json()) as { code: string; errors: string[] };
    assert.equal(problem.code, 'invalid_thing');
    assert.deepEqual(problem.errors, ['a is missing', 'b too']);
  });
});
