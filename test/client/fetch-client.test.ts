import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, type ClientOptions } from '#oncely/client/fetch-client.js';
import { isRetryError, type RetryError } from '#oncely/client/retry-report.js';
import { isHttpRetryError } from '#oncely/client/http-retry-error.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { formatHttpDate } from '#oncely/contract/retry-after.js';
import { RetryTokenBucket } from '#oncely/policy/retry-token-bucket.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { seededRandom } from '#oncely/time/random.js';

const URL_ = 'http://hook.test/hooks/run-complete';
const START = Date.UTC(2026, 0, 1);

interface Sent {
  readonly method: string;
  readonly key: string | null;
  readonly signal: AbortSignal | undefined;
}

/** A fake fetch that answers from a list (a Response factory or an error to throw), recording each call. */
function scripted(answers: ReadonlyArray<(() => Response) | Error>): {
  fetch: typeof fetch;
  sent: Sent[];
} {
  const sent: Sent[] = [];
  const fake = (async (_url: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    sent.push({
      method: init?.method ?? 'GET',
      key: headers.get('idempotency-key'),
      signal: init?.signal ?? undefined,
    });
    const answer = answers[Math.min(sent.length, answers.length) - 1];
    if (answer instanceof Error) throw answer;
    return answer!();
  }) as typeof globalThis.fetch;
  return { fetch: fake, sent };
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    new Response(code === 204 ? null : `s${code}`, { status: code, headers });
const reset = () =>
  Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
  });

function client(fetch: typeof globalThis.fetch, clock: VirtualClock, extra: ClientOptions = {}) {
  return createClient({ fetch, clock, random: seededRandom(3), ...extra });
}

async function rejection(promise: Promise<unknown>): Promise<RetryError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isRetryError(error), `expected a RetryError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the request to be rejected');
}

test('sends the same Idempotency-Key on every attempt and returns the response with the report', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch, sent } = scripted([status(503), status(503), status(200)]);
  const { response, report } = await client(fetch, clock).request(URL_, {
    method: 'POST',
    body: '{}',
    idempotencyKey: 'run-9',
  });
  assert.equal(response.status, 200);
  assert.equal(
    await response.text(),
    's200',
    'the body is still readable after the client read it',
  );
  assert.deepEqual(
    sent.map((s) => s.key),
    ['"run-9"', '"run-9"', '"run-9"'],
    "the draft's sf-string, on every attempt",
  );
  assert.deepEqual(
    report.attempts.map((a) => a.status),
    [503, 503, 200],
  );
  assert.equal(report.lastNon2xxStatus, 503);
  assert.equal(report.stopReason, 'ok');
});

test('a key given as a header is used as the key; a different one in the option is refused', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch, sent } = scripted([status(503), status(200)]);
  const { report } = await client(fetch, clock).request(URL_, {
    method: 'POST',
    headers: { 'Idempotency-Key': 'h-1' },
  });
  assert.equal(report.key, 'h-1');
  assert.deepEqual(
    sent.map((s) => s.key),
    ['h-1', 'h-1'],
  );
  await assert.rejects(
    client(fetch, clock).request(URL_, {
      method: 'POST',
      idempotencyKey: 'o-1',
      headers: { 'Idempotency-Key': 'h-1' },
    }),
    (e) => isInvalidOptionError(e) && e.option === 'idempotencyKey',
  );
  await assert.rejects(
    client(fetch, clock).request(URL_, { method: 'POST', idempotencyKey: '' }),
    /empty idempotency key/,
  );
});

test('POST and PATCH are retried only under a key; GET, HEAD, OPTIONS, PUT and DELETE are retried as idempotent', async () => {
  for (const method of ['POST', 'PATCH', 'post']) {
    const clock = new VirtualClock({ startAt: START });
    const { fetch, sent } = scripted([status(503), status(200)]);
    const error = await rejection(client(fetch, clock).request(URL_, { method }));
    assert.equal(error.report.stopReason, 'unsafe_to_retry', method);
    assert.equal(sent.length, 1, method);
    assert.deepEqual(clock.sleeps, [], 'no sleep before giving up');

    const keyed = scripted([status(503), status(200)]);
    const { report } = await client(keyed.fetch, clock).request(URL_, {
      method,
      idempotencyKey: 'k',
    });
    assert.equal(report.attemptCount, 2, method);
  }
  for (const method of ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']) {
    const clock = new VirtualClock({ startAt: START });
    const { fetch, sent } = scripted([status(503), status(204)]);
    const { report } = await client(fetch, clock).request(URL_, { method });
    assert.equal(report.attemptCount, 2, method);
    assert.deepEqual(
      sent.map((s) => s.key),
      [null, null],
      method,
    );
  }
});

test('a 400 is sent exactly once, and the error carries the report and the last response', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch, sent } = scripted([status(400), status(200)]);
  const error = await rejection(
    client(fetch, clock, { maxAttempts: 5 }).request(URL_, { method: 'POST', idempotencyKey: 'k' }),
  );
  assert.equal(sent.length, 1);
  assert.equal(error.report.stopReason, 'fatal_status');
  assert.equal(error.report.outcome, 'fail');
  assert.equal(error.report.lastNon2xxStatus, 400);
  assert.equal((error.lastValue as Response).status, 400);
  assert.deepEqual(clock.sleeps, []);
});

test('deadline 1.5 s away and Retry-After: 5: stops at once with retry_after_too_long, without sleeping', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch, sent } = scripted([status(429, { 'Retry-After': '5' }), status(200)]);
  const error = await rejection(
    client(fetch, clock, { maxAttempts: 10 }).request(URL_, {
      method: 'POST',
      idempotencyKey: 'k',
      deadlineAt: START + 1500,
    }),
  );
  assert.equal(error.report.stopReason, 'retry_after_too_long');
  assert.equal(sent.length, 1);
  assert.deepEqual(clock.sleeps, []);
  assert.equal(clock.now(), START);
  assert.equal(error.report.totalSleptMs, 0);
});

test('closesAt, the deprecated name of deadlineAt, still sets the deadline; two different ones are refused', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch, sent } = scripted([status(429, { 'Retry-After': '5' }), status(200)]);
  const policyClient = client(fetch, clock, { maxAttempts: 10 });
  const error = await rejection(
    policyClient.request(URL_, { method: 'POST', idempotencyKey: 'k', closesAt: START + 1500 }),
  );
  assert.equal(error.report.stopReason, 'retry_after_too_long');
  assert.equal(sent.length, 1);
  await assert.rejects(
    policyClient.request(URL_, {
      method: 'POST',
      idempotencyKey: 'k',
      deadlineAt: START + 1500,
      closesAt: START + 2000,
    }),
    /invalid option closesAt: .*the same instant as deadlineAt/,
  );
  assert.equal(sent.length, 1, 'a refused request sends nothing');
});

test('Retry-After as an HTTP-date with the server Date one hour off still waits the intended delay', async () => {
  const clock = new VirtualClock({ startAt: START });
  const serverNow = START + 3_600_000;
  const { fetch } = scripted([
    status(503, {
      'Retry-After': formatHttpDate(serverNow + 2000),
      Date: formatHttpDate(serverNow),
    }),
    status(200),
  ]);
  const { report } = await client(fetch, clock, { retryAfterJitterRatio: 0 }).request(URL_, {
    method: 'POST',
    idempotencyKey: 'k',
  });
  assert.equal(report.attempts[0]?.delayMs, 2000);
  assert.equal(report.attempts[0]?.delayReason, 'retry-after');
  const retryAfter = report.attempts[0]?.retryAfter;
  assert.equal(
    retryAfter?.kind === 'delay' ? retryAfter.measuredAgainst : retryAfter?.kind,
    'server-date',
  );
  assert.equal(clock.now(), START + 2000);
});

test('transport failures after sending are unknown, with no status shown; a retry under the key recovers', async () => {
  const clock = new VirtualClock({ startAt: START });
  const socket = Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
  });
  const { fetch } = scripted([reset(), socket, new Error('socket hang up'), status(200)]);
  const { report } = await client(fetch, clock, { maxAttempts: 4 }).request(URL_, {
    method: 'POST',
    idempotencyKey: 'k',
  });
  assert.deepEqual(
    report.attempts.map((a) => [a.outcome, a.status, a.transport?.reason]),
    [
      ['unknown', undefined, 'socket_closed'],
      ['unknown', undefined, 'socket_closed'],
      ['unknown', undefined, 'socket_closed'],
      ['ok', 200, undefined],
    ],
  );
  assert.equal(report.lastNon2xxStatus, undefined);
  assert.match(report.attempts[0]?.detail ?? '', /ECONNRESET/);
});

test('when every attempt is lost, the give-up is unknown, never a refusal', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch } = scripted([reset()]);
  const error = await rejection(
    client(fetch, clock, { maxAttempts: 3 }).request(URL_, { method: 'POST', idempotencyKey: 'k' }),
  );
  assert.equal(error.report.outcome, 'unknown');
  assert.equal(error.report.stopReason, 'budget_exhausted');
});

test('an error that is not a transport failure fails at once', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch, sent } = scripted([new TypeError('Failed to parse URL from nope')]);
  const error = await rejection(client(fetch, clock).request('nope', { method: 'GET' }));
  assert.equal(error.report.stopReason, 'operation_failed');
  assert.equal(sent.length, 1);
});

test('per-attempt timeout aborts a hung fetch, counts as unknown, and is cut to the time left before the deadline', async () => {
  const clock = new VirtualClock({ startAt: START, autoAdvance: false });
  const signals: AbortSignal[] = [];
  // A fetch that never answers and ignores its signal: the client must not wait for it.
  const hung = ((_u: unknown, init?: RequestInit) => {
    signals.push(init!.signal!);
    return new Promise<Response>(() => undefined);
  }) as typeof fetch;
  const pending = client(hung, clock, {
    timer: clock,
    attemptTimeoutMs: 1000,
    baseDelayMs: 0,
    maxAttempts: 3,
  }).request(URL_, {
    method: 'POST',
    idempotencyKey: 'k',
    deadlineAt: START + 1300,
  });
  const settled = rejection(pending);
  await clock.runAll();
  const error = await settled;
  // Attempt 1 gets the full 1000 ms; attempt 2 starts at +1000 with 300 ms left, so its timeout is 300.
  assert.deepEqual(
    clock.sleeps.filter((ms) => ms > 0),
    [1000, 300],
  );
  assert.equal(error.report.attemptCount, 2);
  assert.ok(
    error.report.attempts.every((a) => a.outcome === 'unknown' && /timed out/.test(a.detail ?? '')),
  );
  assert.equal(error.report.outcome, 'unknown');
  assert.equal(error.report.stopReason, 'deadline_passed');
  assert.ok(signals.every((s) => s.aborted));
});

test('a reply cut mid-body is a lost ack (unknown), not a success', async () => {
  const clock = new VirtualClock({ startAt: START });
  const cut = () =>
    new Response(
      new ReadableStream({
        start: (c) => c.error(Object.assign(new Error('terminated'), { code: 'UND_ERR_SOCKET' })),
      }),
      { status: 200 },
    );
  const { fetch } = scripted([cut, status(200)]);
  const { report } = await client(fetch, clock).request(URL_, {
    method: 'POST',
    idempotencyKey: 'k',
  });
  assert.deepEqual(
    report.attempts.map((a) => a.outcome),
    ['unknown', 'ok'],
  );
});

test('a retry budget is shared across requests of one client', async () => {
  const clock = new VirtualClock({ startAt: START });
  const { fetch } = scripted([status(503)]);
  const c = client(fetch, clock, {
    retryBudget: new RetryTokenBucket({ capacity: 10, retryCost: 5 }),
    maxAttempts: 5,
  });
  const first = await rejection(c.request(URL_));
  assert.equal(first.report.stopReason, 'retry_budget_drained');
  assert.equal(first.report.attemptCount, 3);
  const second = await rejection(c.request(URL_));
  assert.equal(
    second.report.attemptCount,
    1,
    'the drained budget refuses the next request its first retry',
  );
});

test('the caller signal stops the loop as aborted', async () => {
  const clock = new VirtualClock({ startAt: START, autoAdvance: false });
  const { fetch } = scripted([status(503)]);
  const controller = new AbortController();
  const settled = rejection(
    client(fetch, clock, { baseDelayMs: 1000, jitter: 'none' }).request(URL_, {
      signal: controller.signal,
    }),
  );
  await clock.advance(0);
  controller.abort();
  const error = await settled;
  assert.equal(error.report.stopReason, 'aborted');
  assert.equal(error.report.attemptCount, 1);
});

test('options are validated at the edge', async () => {
  assert.throws(
    () => createClient({ attemptTimeoutMs: 0 }),
    (e) => isInvalidOptionError(e) && e.option === 'attemptTimeoutMs',
  );
  assert.throws(
    () => createClient({ maxAttempts: 0 }),
    (e) => isInvalidOptionError(e) && e.option === 'maxAttempts',
  );
  const c = createClient({ fetch: scripted([status(200)]).fetch });
  await assert.rejects(
    c.request(URL_, { method: 'POST', body: new ReadableStream(), idempotencyKey: 'k' }),
    (e) => isInvalidOptionError(e) && e.option === 'body',
  );
  await assert.rejects(
    c.request(URL_, { attemptTimeoutMs: -1 }),
    (e) => isInvalidOptionError(e) && e.option === 'attemptTimeoutMs',
  );
});

test('a give-up carries the last response, typed, and its problem+json parsed; the body is still readable', async () => {
  const clock = new VirtualClock({ startAt: START });
  const problem = {
    type: 'urn:oncely:problem:version_conflict',
    title: 'Version conflict',
    status: 409,
    code: 'version_conflict',
    detail: 'expected 1, at 2',
  };
  const conflict = () =>
    new Response(JSON.stringify(problem), {
      status: 409,
      headers: { 'content-type': 'application/problem+json; charset=utf-8' },
    });
  const error = await rejection(
    client(scripted([conflict]).fetch, clock).request(URL_, {
      method: 'PATCH',
      idempotencyKey: 'k',
    }),
  );
  assert.ok(isHttpRetryError(error));
  assert.equal(error.response?.status, 409);
  assert.deepEqual(error.problem, problem);
  assert.equal(error.problem?.code, 'version_conflict');
  assert.deepEqual(await error.response?.json(), problem);
  assert.equal(error.report.stopReason, 'fatal_status');

  const plain = await rejection(
    client(scripted([status(400)]).fetch, clock).request(URL_, {
      method: 'POST',
      idempotencyKey: 'k',
    }),
  );
  assert.ok(isHttpRetryError(plain));
  assert.equal(plain.response?.status, 400);
  assert.equal(plain.problem, undefined, 'not a problem document');
});

test('a give-up whose last attempt got no response has no response, even after an earlier 503', async () => {
  const clock = new VirtualClock({ startAt: START });
  const error = await rejection(
    client(scripted([status(503), reset()]).fetch, clock, { maxAttempts: 2 }).request(URL_, {
      method: 'POST',
      idempotencyKey: 'k',
    }),
  );
  assert.ok(isHttpRetryError(error));
  assert.equal(error.response, undefined);
  assert.equal(error.problem, undefined);
  assert.ok(
    error.lastValue instanceof Response,
    'the last value is still the 503, for whoever wants it',
  );
});
