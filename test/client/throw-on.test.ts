// throwOn: 'never' makes client.request() settle with the response, its problem and the report
// however the intent ends; the default still rejects. Fetch is a scripted fake, time a VirtualClock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createClient,
  type ClientResult,
  type SettledClientResult,
} from '#oncely/client/fetch-client.js';
import { isHttpRetryError } from '#oncely/client/http-retry-error.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { seededRandom } from '#oncely/time/random.js';

const URL_ = 'http://hook.test/hooks/run-complete';

/** A fake fetch answering from a list (a Response factory or an error to throw); counts the calls. */
function scripted(answers: ReadonlyArray<(() => Response) | Error>): {
  fetch: typeof fetch;
  calls: () => number;
} {
  let calls = 0;
  const fake = (async () => {
    calls++;
    const answer = answers[Math.min(calls, answers.length) - 1]!;
    if (answer instanceof Error) throw answer;
    return answer();
  }) as typeof globalThis.fetch;
  return { fetch: fake, calls: () => calls };
}

const problem422 = () =>
  new Response(JSON.stringify({ title: 'Unprocessable', status: 422, code: 'bad_payload' }), {
    status: 422,
    headers: { 'content-type': 'application/problem+json' },
  });
const status = (code: number) => () => new Response(`s${code}`, { status: code });
const reset = () =>
  Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
  });

function settlingClient(fetch: typeof globalThis.fetch) {
  return createClient({
    fetch,
    clock: new VirtualClock(),
    random: seededRandom(5),
    baseDelayMs: 0,
    throwOn: 'never',
  });
}

test("throwOn 'never': a refusal resolves with the response, its problem and the report", async () => {
  const { fetch, calls } = scripted([problem422]);
  const result: SettledClientResult = await settlingClient(fetch).request(URL_, {
    method: 'POST',
    idempotencyKey: 'k-1',
    body: '{}',
  });
  assert.equal(result.ok, false);
  assert.equal(result.response?.status, 422);
  assert.equal(result.problem?.code, 'bad_payload');
  assert.equal(result.report.stopReason, 'fatal_status');
  assert.equal(result.report.outcome, 'fail');
  assert.equal(calls(), 1, 'a fatal status is not retried');
  assert.match((await result.response?.text()) ?? '', /bad_payload/, 'the body is still readable');
});

test("throwOn 'never': attempts spent on 503s resolve with the last 503", async () => {
  const { fetch, calls } = scripted([status(503)]);
  const result = await settlingClient(fetch).request(URL_, { maxAttempts: 3 });
  assert.equal(result.ok, false);
  assert.equal(result.response?.status, 503);
  assert.equal(result.problem, undefined, 'a plain-text body is no problem document');
  assert.equal(result.report.stopReason, 'budget_exhausted');
  assert.equal(calls(), 3);
});

test("throwOn 'never': no answer at all resolves with no response and an unknown outcome", async () => {
  const { fetch } = scripted([reset()]);
  const result = await settlingClient(fetch).request(URL_, {
    method: 'POST',
    idempotencyKey: 'k-2',
    body: '{}',
    maxAttempts: 2,
  });
  assert.equal(result.ok, false);
  assert.equal(result.response, undefined);
  assert.equal(result.report.outcome, 'unknown');
  assert.equal(result.report.attempts[1]?.transport?.sent, true);
});

test("throwOn 'never': a 2xx resolves with ok true, the response and the report", async () => {
  const { fetch } = scripted([status(503), status(201)]);
  const result = await settlingClient(fetch).request(URL_, { method: 'PUT', body: 'x' });
  assert.equal(result.ok, true);
  if (result.ok) {
    // Narrowed by ok: the response is there, typed without undefined.
    assert.equal(result.response.status, 201);
    assert.equal(await result.response.text(), 's201');
  }
  assert.equal(result.problem, undefined);
  assert.equal(result.report.attemptCount, 2);
  assert.equal(result.report.outcome, 'ok');
});

test('the default still rejects with an HttpRetryError, and resolves without ok', async () => {
  const { fetch } = scripted([problem422, status(200)]);
  const client = createClient({ fetch, clock: new VirtualClock(), throwOn: 'give-up' });
  const error: unknown = await client.request(URL_).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(isHttpRetryError(error), String(error));
  assert.equal(error.problem?.code, 'bad_payload');
  const ok: ClientResult = await client.request(URL_);
  assert.equal(ok.response.status, 200);
  assert.equal('ok' in ok, false);
  // @ts-expect-error: the default client's result has no `ok`; only a settling client's does.
  assert.equal(ok.ok, undefined);
});

test("bad options still reject under 'never', and an unknown throwOn is refused at once", async () => {
  const { fetch, calls } = scripted([status(200)]);
  await assert.rejects(
    settlingClient(fetch).request(URL_, { deadlineAt: 1, closesAt: 2 }),
    (error: unknown) => isInvalidOptionError(error) && error.option === 'closesAt',
  );
  assert.equal(calls(), 0, 'nothing was sent');
  assert.throws(
    () => createClient({ fetch, throwOn: 'sometimes' as 'never' }),
    /invalid option throwOn: got "sometimes", expected one of give-up, never/,
  );
});
