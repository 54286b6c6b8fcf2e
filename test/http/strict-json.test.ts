// JSON that means two things is refused before anything is fingerprinted: repeated member names,
// lone surrogates, nesting past the limit (RFC 8259 sections 4 and 8.2, RFC 7493 section 2.3).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, parseStrictJson } from '#oncely/http/strict-json.js';

const parse = (text: string): ReturnType<typeof parseStrictJson> =>
  parseStrictJson(new TextEncoder().encode(text));

describe('parseStrictJson', () => {
  it('parses what JSON.parse parses, with __proto__ as a plain member', () => {
    const parsed = parse('{"a":[1,{"b":null}],"__proto__":{"x":1},"s":"\\ud83d\\ude00"}');
    assert.equal(parsed.kind, 'json');
    assert.deepEqual(
      parsed.kind === 'json' && parsed.value,
      JSON.parse('{"a":[1,{"b":null}],"__proto__":{"x":1},"s":"😀"}'),
    );
    assert.equal(({} as { x?: number }).x, undefined, 'no prototype was touched');
  });

  const repeated: Array<[string, string, string]> = [
    ['{"student":"first","student":"second"}', 'student', '/student'],
    ['{"a":1,"\\u0061":2}', 'a', '/a'],
    ['{"x":{"y":1,"y":1}}', 'y', '/x/y'],
    ['[0,{"k":1,"k":2}]', 'k', '/1/k'],
    ['{"a/b~":{"c":1,"c":2}}', 'c', '/a~1b~0/c'],
    ['{"__proto__":1,"__proto__":2}', '__proto__', '/__proto__'],
  ];
  for (const [text, member, pointer] of repeated) {
    it(`refuses the repeated member in ${text}, naming it`, () => {
      const parsed = parse(text);
      assert.equal(parsed.kind, 'invalid');
      assert.equal(parsed.kind === 'invalid' && parsed.member, member);
      assert.equal(parsed.kind === 'invalid' && parsed.pointer, pointer);
      assert.match(
        parsed.kind === 'invalid' ? parsed.reason : '',
        new RegExp(`"${member.replace(/[_]/g, '.')}" appears twice`),
      );
    });
  }

  for (const text of [
    '"a\\ud800"',
    '{"k":"\\udfff"}',
    '{"\\ud800":1}',
    '["\\ude00\\ud83d"]',
    '"\\ud83d"',
  ]) {
    it(`refuses the lone surrogate in ${text}`, () => {
      const parsed = parse(text);
      assert.equal(parsed.kind, 'invalid');
      assert.match(parsed.kind === 'invalid' ? parsed.reason : '', /lone surrogate/);
    });
  }

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more, even 100,000 deep, without a stack overflow`, () => {
    const nest = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    assert.equal(parse(nest(MAX_JSON_DEPTH)).kind, 'json');
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      const parsed = parse(nest(depth));
      assert.equal(parsed.kind, 'invalid');
      assert.match(parsed.kind === 'invalid' ? parsed.reason : '', /nested deeper than 64/);
    }
    assert.equal(
      parse(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`).kind,
      'invalid',
    );
  });

  it('refuses bytes that are not UTF-8 and text that is not JSON', () => {
    assert.equal(parseStrictJson(new Uint8Array([0x22, 0xff, 0x22])).kind, 'invalid');
    for (const text of ['', '{', '{"a":1,}', 'NaN', "{'a':1}"])
      assert.equal(parse(text).kind, 'invalid', text);
  });
});
