import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { keyProblem } from '#oncely/contract/idempotency-key.js';
import { keyFieldValue, readKeyField } from '#oncely/contract/key-field.js';

const UUID = '8e03978e-40d5-43e8-bc93-6894a57f9324';

function accepted(value: string, key: string, form: 'string' | 'bare'): void {
  assert.deepEqual(readKeyField(value), { ok: true, key, form }, value);
}

function refused(value: string, why: RegExp): void {
  const read = readKeyField(value);
  assert.equal(read.ok, false, `${value} is refused`);
  if (!read.ok) assert.match(read.problem, why, value);
}

describe('readKeyField: one Idempotency-Key, RFC 9651 Item', () => {
  it('takes an sf-string, its escapes undone (RFC 9651 section 3.3.3)', () => {
    accepted(`"${UUID}"`, UUID, 'string');
    accepted('"a\\"b\\\\c"', 'a"b\\c', 'string');
    accepted('"a,b;c"', 'a,b;c', 'string');
    accepted('  "spaced"  ', 'spaced', 'string');
  });

  it('takes a bare key as its text: a token, a UUID, digits as sent', () => {
    accepted('abc', 'abc', 'bare');
    accepted(UUID, UUID, 'bare');
    accepted('ik_2f1c:part/1', 'ik_2f1c:part/1', 'bare');
    accepted('0012', '0012', 'bare');
    accepted('a b', 'a b', 'bare');
  });

  it('refuses a list, a repeated field as node and fetch join it, and commas', () => {
    refused('"a", "b"', /list of 2 values/);
    refused('a, b, c', /list of 3 values/);
    refused('key,with,commas,longer-than-twenty-chars', /list of 4 values/);
    refused(`${UUID}, ${UUID}`, /comma: a list, or the field sent twice/);
  });

  it('refuses parameters, and a quoted string that is no sf-string', () => {
    refused('"k";v=1', /parameters \(;v\)/);
    refused('k;a;b=2', /parameters \(;a;b\)/);
    refused(`${UUID};v=1`, /semicolon/);
    refused('"unterminated', /not a valid Structured Field String/);
    refused('"bad \\n escape"', /not a valid Structured Field String/);
  });

  it('leaves the key rules to keyProblem: an empty key reads, and is then refused there', () => {
    accepted('""', '', 'string');
    assert.equal(keyProblem(''), 'empty idempotency key');
  });
});

describe('keyFieldValue', () => {
  it("writes the draft's sf-string by default, and the bare text on request", () => {
    assert.equal(keyFieldValue('k-1', 'string'), '"k-1"');
    assert.equal(keyFieldValue('a"b\\c', 'string'), '"a\\"b\\\\c"');
    assert.equal(keyFieldValue(UUID, 'bare'), UUID);
  });

  it('reads a bare key that is itself an sf-string as its content', () => {
    // Found by the property below (seed 1101032764): `""` sent bare is the empty sf-string.
    assert.deepEqual(readKeyField(keyFieldValue('""', 'bare')), {
      ok: true,
      key: '',
      form: 'string',
    });
    assert.deepEqual(readKeyField(keyFieldValue('"a"', 'bare')), {
      ok: true,
      key: 'a',
      form: 'string',
    });
  });

  it('reads back every valid key it writes, in both forms, as the same key', () => {
    const key = fc
      .stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,40}[\x21-\x7e])?$/)
      .filter((k) => keyProblem(k) === undefined);
    fc.assert(
      fc.property(key, (k) => {
        const quoted = readKeyField(keyFieldValue(k, 'string'));
        assert.deepEqual(quoted, { ok: true, key: k, form: 'string' });
        const bare = readKeyField(keyFieldValue(k, 'bare'));
        // A bare key with a comma, a semicolon or an opening quote is not one key: the reason
        // the client's default is the sf-string. One that is itself a whole sf-string (`""`,
        // `"a"`) reads as that string's content (rule 1), not as its own text.
        if (bare.ok && bare.form === 'string') assert.match(k, /^".*"$/);
        else if (bare.ok) assert.equal(bare.key, k);
        else assert.match(k, /[,;"]/);
      }),
    );
  });
});
