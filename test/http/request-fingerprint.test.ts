import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fingerprint, sha256Hex } from '#oncely/contract/fingerprint.js';
import { requestFingerprint } from '#oncely/http/request-fingerprint.js';

describe('requestFingerprint (node:crypto)', () => {
  it('gives the digests of the browser-safe hash, so stored fingerprints stay valid', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('POST', 'patch', 'PUT'),
        fc.webPath(),
        fc.string({ unit: 'binary' }),
        fc.uint8Array({ maxLength: 300 }),
        (method, path, query, body) => {
          const url = new URL(`http://h${path.startsWith('/') ? path : `/${path}`}`);
          url.search = query; // any text: what URL keeps of it unescaped must be escaped alike

          const expected = fingerprint({
            method: method.toUpperCase(),
            path: `${url.pathname}${url.search}`,
            body: sha256Hex(body),
          });
          assert.equal(requestFingerprint({ method, url, headers: new Headers(), body }), expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
