import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readRequestTarget, RequestTarget } from '#oncely/http/request-target.js';

const head = (target: string, host = 'api.test:8080') => ({
  method: 'POST',
  target,
  hosts: [host],
  httpVersion: '1.1',
  encrypted: false,
});

describe('readRequestTarget', () => {
  it('reads any origin-form target as WHATWG URL parsing does, its URL parsed only when read', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.constantFrom('api.test:8080', 'localhost', '[::1]:3000', '127.0.0.1'),
        (rest, host) => {
          const target = `/${rest}`;
          const read = readRequestTarget(head(target, host));
          assert.ok(read instanceof RequestTarget, `refused ${JSON.stringify(target)}`);
          const expected = new URL(`http://${host}${target}`);
          assert.equal(read.pathAndQuery, `${expected.pathname}${expected.search}`);
          assert.equal(read.url.href, expected.href);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('answers a repeated target from what it read the first time, and the same', () => {
    const first = readRequestTarget(head('/a/./b/../c?x=1#f'));
    const again = readRequestTarget(head('/a/./b/../c?x=1#f', 'other.test'));
    assert.ok(first instanceof RequestTarget && again instanceof RequestTarget);
    assert.equal(first.pathAndQuery, '/a/c?x=1');
    assert.equal(again.pathAndQuery, '/a/c?x=1');
    assert.equal(again.url.host, 'other.test', "the host is the request's own");
  });

  it('refuses a Host that only fails as a whole URL, every time it is sent', () => {
    for (let i = 0; i < 2; i++) {
      const read = readRequestTarget(head('/orders', 'api.test:70000'));
      assert.equal(read.kind, 'refused');
      assert.ok(!(read instanceof RequestTarget));
      assert.equal(read.response.status, 400);
    }
  });

  it('keeps the parsed URL of an absolute-form target', () => {
    const read = readRequestTarget(head('http://proxy.test/p?q=1'));
    assert.ok(read instanceof RequestTarget);
    assert.equal(read.pathAndQuery, '/p?q=1');
    assert.equal(read.url.host, 'proxy.test');
  });
});
