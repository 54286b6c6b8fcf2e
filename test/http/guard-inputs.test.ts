import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LazyFingerprintInput, LazyValidationInput } from '#oncely/http/guard-inputs.js';
import { incomingOfRequest, type Incoming } from '#oncely/http/incoming.js';
import { requestFingerprint } from '#oncely/http/request-fingerprint.js';

/** An Incoming over a web Request that counts how often the Request is asked for. */
function counted(request: Request): { incoming: Incoming; made: () => number } {
  const inner = incomingOfRequest(request);
  let made = 0;
  const incoming: Incoming = {
    method: inner.method,
    url: inner.url,
    pathAndQuery: inner.pathAndQuery,
    header: (name) => inner.header(name),
    aborted: false,
    throwIfAborted: () => {},
    readBody: (maxBytes) => inner.readBody(maxBytes),
    request: () => {
      made++;
      return request;
    },
  };
  return { incoming, made: () => made };
}

const request = new Request('http://api.test/orders?x=1', {
  method: 'POST',
  headers: { 'x-tenant': 'acme' },
  body: '{}',
});
const body = new TextEncoder().encode('{}');

describe('what validate and fingerprintOf are given', () => {
  it('the default fingerprint never makes the web Request; headers read make it once asked', () => {
    const { incoming, made } = counted(request);
    const input = new LazyFingerprintInput(incoming, { scope: 's', body, value: 7 });
    const fingerprint = requestFingerprint(input);
    assert.equal(made(), 0);
    const fromUrl = { method: 'POST', url: new URL(request.url), headers: request.headers, body };
    assert.equal(fingerprint, requestFingerprint(fromUrl), "the carried path is the URL's");
    assert.deepEqual(
      [input.method, input.url.href, input.value, input.headers.get('x-tenant')],
      ['POST', 'http://api.test/orders?x=1', 7, 'acme'],
    );
    assert.equal(made(), 1);
  });

  it('validate gets the scope and bytes as fields, the Request only when it reads it', () => {
    const { incoming, made } = counted(request);
    const { scope, body: bytes } = new LazyValidationInput(incoming, 'alice', body);
    assert.deepEqual([scope, bytes], ['alice', body]);
    assert.equal(made(), 0);
    assert.equal(new LazyValidationInput(incoming, 'alice', body).request, request);
    assert.equal(made(), 1);
  });
});
