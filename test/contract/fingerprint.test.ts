import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson, fingerprint, sha256Hex } from '#oncely/contract/index.js';

test('sha256Hex matches the FIPS 180-2 test vectors, for strings and bytes', () => {
  assert.equal(
    sha256Hex('abc'),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  );
  assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256Hex(new Uint8Array([0x61, 0x62, 0x63])), sha256Hex('abc'));
  // UTF-8, not UTF-16: the same bytes node:crypto hashes.
  assert.equal(sha256Hex('é😀'), createHash('sha256').update('é😀', 'utf8').digest('hex'));
});

test('canonicalJson sorts keys at every depth and writes numbers in one form (RFC 8785)', () => {
  assert.equal(canonicalJson({ b: 1, a: [3, { d: 1, c: 2 }] }), '{"a":[3,{"c":2,"d":1}],"b":1}');
  assert.equal(
    canonicalJson({ n: 1.0, big: 1e21, small: 1e-7 }),
    '{"big":1e+21,"n":1,"small":1e-7}',
  );
  assert.throws(() => canonicalJson(undefined), TypeError);
});

test('the fingerprint is the SHA-256 of the canonical JSON (a known vector)', () => {
  // printf '{"a":1,"b":2}' | sha256sum
  const vector = '43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777';
  assert.equal(fingerprint({ a: 1, b: 2 }), vector);
  assert.equal(fingerprint({ b: 2, a: 1 }), vector);
  // printf '{"amount":125,"assignment":"lab3","student":"achen"}' | sha256sum
  assert.equal(
    fingerprint({ student: 'achen', assignment: 'lab3', amount: 125 }),
    'e5e9691a65380a82841f0d3623cbb1bb34269f89ef231ab0eb08b0af1d5f8d98',
  );
});

test('different commands have different fingerprints', () => {
  const prints = [
    fingerprint({ a: 1 }),
    fingerprint({ a: 2 }),
    fingerprint({ a: '1' }),
    fingerprint({ a: [1, 2] }),
    fingerprint({ a: [2, 1] }),
    fingerprint({ a: null }),
    fingerprint({}),
  ];
  assert.equal(new Set(prints).size, prints.length);
});

test('property: key order never changes the fingerprint', () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 }),
      fc.integer(),
      (dict, seed) => {
        const entries = Object.entries(dict);
        // Deterministic shuffle from the seed: a different insertion order, the same object.
        const shuffled = entries
          .map((entry, i) => ({ entry, sortBy: Math.imul(i + 1, seed | 1) >>> 0 }))
          .sort((x, y) => x.sortBy - y.sortBy)
          .map((x) => x.entry);
        assert.equal(fingerprint(Object.fromEntries(shuffled)), fingerprint(dict));
      },
    ),
    { numRuns: 100 },
  );
});
