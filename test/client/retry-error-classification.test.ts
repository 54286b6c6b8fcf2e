import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyTransportError,
  describeError,
  isTransportError,
} from '#oncely/client/transport-error.js';
import { defaultClassifyError, defaultObserve } from '#oncely/client/retry.js';

const withCode = (message: string, code: string): Error =>
  Object.assign(new Error(message), { code });

test('socket errors and timeouts are transport errors, also inside a fetch "cause" chain', () => {
  assert.ok(isTransportError(withCode('read ECONNRESET', 'ECONNRESET')));
  assert.ok(
    isTransportError(
      new TypeError('fetch failed', {
        cause: withCode('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED'),
      }),
    ),
  );
  assert.ok(
    isTransportError(
      new TypeError('fetch failed', { cause: withCode('other side closed', 'UND_ERR_SOCKET') }),
    ),
  );
  assert.ok(
    isTransportError(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
  );
  assert.ok(isTransportError(new DOMException('This operation was aborted', 'AbortError')));
  assert.ok(isTransportError(new Error('socket hang up')));
});

test('ordinary errors and non-errors are not transport errors', () => {
  for (const value of [
    new Error('bad input'),
    new TypeError('x is not a function'),
    withCode('nope', 'ENOENT'),
    null,
    undefined,
    'ECONNRESET',
    42,
  ]) {
    assert.equal(isTransportError(value), false, String(value));
  }
});

test('a cyclic cause chain ends the search', () => {
  const error = new Error('loop') as Error & { cause?: unknown };
  error.cause = error;
  assert.equal(isTransportError(error), false);
  assert.equal(describeError(error), 'loop');
});

test('describeError names the innermost cause', () => {
  assert.equal(
    describeError(
      new TypeError('fetch failed', { cause: withCode('read ECONNRESET', 'ECONNRESET') }),
    ),
    'fetch failed: read ECONNRESET',
  );
  assert.equal(
    describeError(
      new TypeError('fetch failed', { cause: withCode('socket closed', 'UND_ERR_SOCKET') }),
    ),
    'fetch failed: socket closed (UND_ERR_SOCKET)',
  );
  assert.equal(describeError('boom'), 'boom');
  assert.equal(describeError(undefined), 'unknown error');
});

test('the default error classifier: not sent before the request left, unknown after, the rest fail', () => {
  // The 408 is the policy's internal stand-in for its status table; reports never show it.
  assert.deepEqual(defaultClassifyError(withCode('read ECONNRESET', 'ECONNRESET')), {
    kind: 'unknown',
    status: 408,
    reason: 'socket_closed',
    detail: 'read ECONNRESET',
  });
  assert.deepEqual(
    defaultClassifyError(Object.assign(new Error('timed out'), { name: 'TimeoutError' })),
    { kind: 'unknown', status: 408, reason: 'timed_out', detail: 'timed out' },
  );
  const refused = new TypeError('fetch failed', {
    cause: withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
  });
  assert.deepEqual(defaultClassifyError(refused), {
    kind: 'not_sent',
    reason: 'connection_refused',
    detail: 'fetch failed: connect ECONNREFUSED 127.0.0.1:1',
  });
  const dns = new TypeError('fetch failed', {
    cause: withCode('getaddrinfo ENOTFOUND x.invalid', 'ENOTFOUND'),
  });
  assert.equal(defaultClassifyError(dns).kind, 'not_sent');
  assert.deepEqual(classifyTransportError(withCode('connect timeout', 'UND_ERR_CONNECT_TIMEOUT')), {
    sent: false,
    reason: 'connect_timeout',
  });
  assert.deepEqual(
    classifyTransportError(withCode('timed out', 'ETIMEDOUT')),
    { sent: true, reason: 'timed_out' },
    'ambiguous: read as maybe sent',
  );
  assert.deepEqual(defaultClassifyError(new Error('bad input')), {
    kind: 'failure',
    detail: 'bad input',
  });
});

test('the default observer reads a status and its headers, and treats anything else as success', () => {
  const response = new Response(null, {
    status: 503,
    headers: { 'Retry-After': '2', Date: 'Sun, 06 Nov 1994 08:49:37 GMT' },
  });
  assert.deepEqual(defaultObserve(response), {
    kind: 'response',
    status: 503,
    retryAfter: '2',
    date: 'Sun, 06 Nov 1994 08:49:37 GMT',
  });
  assert.deepEqual(defaultObserve({ status: 429 }), {
    kind: 'response',
    status: 429,
    retryAfter: null,
    date: null,
  });
  assert.deepEqual(defaultObserve('done'), { kind: 'response', status: 200 });
  assert.deepEqual(defaultObserve(undefined), { kind: 'response', status: 200 });
});
