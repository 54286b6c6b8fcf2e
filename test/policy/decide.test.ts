import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decide,
  decideStart,
  INITIAL_RETRY_STATE,
  mayStartAttempt,
  resolveRetryPolicy,
  type Observation,
} from '#oncely/policy/index.js';
import { formatHttpDate } from '#oncely/contract/index.js';
import { seededRandom } from '#oncely/time/index.js';
import { expectDelays, runPolicy } from '../support/expect-delays.js';

const response = (status: number, retryAfter?: string, date?: string): Observation => ({
  kind: 'response',
  status,
  retryAfter,
  date,
});
const metronome = { jitter: 'none', baseDelayMs: 100, maxDelayMs: 10_000 } as const;
/** What a plain value (no status) is observed as: a bare 200 without headers. */
const PLAIN: Observation = { kind: 'response', status: 200 };

// The webhook storm's four classifier tests (docs/origins.md), as our own tests against the pure step.

test('the webhook storm: 200 is terminal', () => {
  const [decision] = decide(
    INITIAL_RETRY_STATE,
    response(200),
    0,
    seededRandom(1),
    resolveRetryPolicy({ maxAttempts: 5 }),
  );
  assert.equal(decision.action, 'stop');
  assert.ok(decision.action === 'stop' && decision.reason === 'ok' && decision.outcome === 'ok');
});

test('the webhook storm: 400 is never retried and sleeps 0, even with a Retry-After and budget left', () => {
  const trace = expectDelays({ maxAttempts: 5 }, [response(400, '2'), 200], [], {
    stop: 'fatal_status',
  });
  assert.equal(trace.stop?.outcome, 'fail');
  assert.equal(trace.decisions.length, 1);
});

test('the webhook storm: 429 with Retry-After "2" retries after at least 2 s and at most 3 s', () => {
  for (let seed = 0; seed < 200; seed++) {
    const trace = expectDelays({ maxAttempts: 5 }, [response(429, '2'), 200], [[2_000, 3_000]], {
      random: seededRandom(seed),
      stop: 'ok',
    });
    assert.equal(trace.delayReasons[0], 'retry-after');
  }
});

test('the webhook storm: the budget beats a retryable status', () => {
  const trace = expectDelays(
    { maxAttempts: 5, ...metronome },
    [503, 503, 503, 503, response(503, '1')],
    [100, 200, 400, 800],
    {
      stop: 'budget_exhausted',
    },
  );
  assert.equal(trace.stop?.outcome, 'fail');
});

test('an unlisted status stops as unlisted, an operation failure as operation_failed', () => {
  expectDelays({}, [418], [], { stop: 'unlisted_status' });
  expectDelays({}, [503, { kind: 'failure', detail: 'bug' }], [[0, 100]], {
    stop: 'operation_failed',
  });
});

test('after an unknown attempt, no stop is reported as a plain failure', () => {
  for (const last of [400, 418, 503, { kind: 'failure', detail: 'bug' } as const]) {
    const trace = runPolicy({ maxAttempts: 2 }, ['timeout', last]);
    assert.equal(trace.stop?.outcome, 'unknown', `timeout then ${JSON.stringify(last)}`);
  }
  assert.equal(runPolicy({}, ['timeout', 200]).stop?.outcome, 'ok');
});

test('a retry after an unknown attempt is marked as after a timeout (it costs more tokens)', () => {
  const trace = runPolicy({}, ['timeout', 503, 200]);
  assert.deepEqual(
    trace.decisions.map((d) => d.action === 'retry' && d.afterTimeout),
    [true, false, false],
  );
});

test('jitter none doubles up to the cap', () => {
  expectDelays(
    { ...metronome, maxAttempts: 8, maxDelayMs: 1_000 },
    [503, 502, 'timeout', 500, 504, 429, 408, 200],
    [100, 200, 400, 800, 1_000, 1_000, 1_000],
    {
      stop: 'ok',
    },
  );
});

test('a Retry-After longer than maxRetryAfterMs stops at once instead of retrying early', () => {
  const trace = expectDelays({}, [response(503, '31'), 200], [], { stop: 'retry_after_too_long' });
  assert.equal(trace.stop?.retryAfter.kind, 'delay');
  expectDelays({}, [response(503, '30'), 200], [[30_000, 45_000]], { stop: 'ok' });
  expectDelays({ maxRetryAfterMs: 5_000 }, [response(503, '6'), 200], [], {
    stop: 'retry_after_too_long',
  });
});

test('a Retry-After past the time left before the deadline stops at once, without sleeping', () => {
  expectDelays({ deadlineAt: 10_000 }, [response(503, '10'), 200], [], {
    stop: 'retry_after_too_long',
  });
  expectDelays({ deadlineAt: 10_000 }, [response(503, '9'), 200], [], {
    startAt: 1_000,
    stop: 'retry_after_too_long',
  });
});

test('jitter stretches a Retry-After but never onto or past the deadline, and never below the ask', () => {
  for (let seed = 0; seed < 100; seed++) {
    const trace = expectDelays({ deadlineAt: 2_500 }, [response(503, '2'), 200], [[2_000, 2_499]], {
      random: seededRandom(seed),
    });
    assert.equal(trace.stop?.reason, 'ok');
  }
});

test('a Retry-After date is measured against the server Date', () => {
  const serverNow = Date.UTC(2026, 2, 14, 12, 0, 0);
  const localNow = serverNow + 3_600_000; // our clock is an hour fast
  const trace = expectDelays(
    { retryAfterJitterRatio: 0 },
    [response(503, formatHttpDate(serverNow + 4_000), formatHttpDate(serverNow)), 200],
    [4_000],
    { startAt: localNow, stop: 'ok' },
  );
  const first = trace.decisions[0]!;
  assert.ok(
    first.action === 'retry' &&
      first.retryAfter.kind === 'delay' &&
      first.retryAfter.measuredAgainst === 'server-date',
  );
});

test('an unparsable Retry-After falls back to the default backoff, and says so', () => {
  const trace = expectDelays(
    { ...metronome },
    [response(503, 'soon'), response(503, '1.5'), 200],
    [100, 200],
    { stop: 'ok' },
  );
  assert.deepEqual(trace.delayReasons, ['retry-after-unparsed', 'retry-after-unparsed']);
  const first = trace.decisions[0]!;
  assert.deepEqual(first.retryAfter, { kind: 'unparsed', raw: 'soon' });
  assert.deepEqual(runPolicy({ ...metronome }, [503, 200]).delayReasons, ['backoff']);
});

test('a backoff that would end at or past the deadline stops with deadline_passed', () => {
  expectDelays({ ...metronome, deadlineAt: 300 }, [503, 503, 503], [100], {
    stop: 'deadline_passed',
  });
  // The dropbox story (docs/origins.md), fixture D: an ack swallowed 1 ms before the deadline; the next try would come after it.
  expectDelays({ ...metronome, baseDelayMs: 2, deadlineAt: 1_000 }, ['timeout', 200], [], {
    startAt: 999,
    stop: 'deadline_passed',
  });
});

test('an attempt that ends after the deadline stops with deadline_passed, whatever the server asks', () => {
  // Regression: a Retry-After used to be blamed (retry_after_too_long) when no wait could fit.
  expectDelays({ deadlineAt: 1_000 }, [response(503, '1'), 200], [], {
    attemptDurationMs: 1_500,
    stop: 'deadline_passed',
  });
  expectDelays({ deadlineAt: 1_000 }, [503, 200], [], {
    attemptDurationMs: 1_000,
    stop: 'deadline_passed',
  });
});

test('no attempt may start at or after the deadline', () => {
  const policy = resolveRetryPolicy({ deadlineAt: 1_000 });
  assert.equal(mayStartAttempt(999, policy), true);
  assert.equal(mayStartAttempt(1_000, policy), false);
  assert.equal(mayStartAttempt(1_001, policy), false);
  assert.equal(
    mayStartAttempt(Number.MAX_SAFE_INTEGER, resolveRetryPolicy()),
    true,
    'no deadline by default',
  );
});

test('the step is pure: the same inputs give the same decision', () => {
  const policy = resolveRetryPolicy();
  const a = decide(INITIAL_RETRY_STATE, response(503), 10, seededRandom(3), policy);
  const b = decide(INITIAL_RETRY_STATE, response(503), 10, seededRandom(3), policy);
  assert.deepEqual(a, b);
  assert.deepEqual(INITIAL_RETRY_STATE, { attempt: 0, previousDelayMs: 0, sawUnknown: false });
});

test('a first success gets the same answer as any success: attempt 1, whatever the time or inputs', () => {
  const policy = resolveRetryPolicy({ deadlineAt: 50 });
  const inputs = [{}, { aborted: true }, { mayRetry: false }];
  for (const observation of [response(200), response(204), response(299, '5'), PLAIN]) {
    for (const now of [0, 49, 50, 1e12]) {
      for (const input of inputs) {
        const first = decide(INITIAL_RETRY_STATE, observation, now, seededRandom(1), policy, input);
        // An equal state that is not the shared one takes the general path.
        const general = decide(
          { ...INITIAL_RETRY_STATE },
          observation,
          now,
          seededRandom(1),
          policy,
          input,
        );
        assert.deepEqual(first, general);
        assert.equal(first[0].action === 'stop' && first[0].reason, 'ok');
        assert.deepEqual(first[1], { attempt: 1, previousDelayMs: 0, sawUnknown: false });
      }
    }
  }
  // A success after an unknown attempt keeps what the loop saw.
  const [decision, next] = decide(
    { attempt: 2, previousDelayMs: 400, sawUnknown: true },
    response(200),
    0,
    seededRandom(1),
    policy,
  );
  assert.ok(decision.action === 'stop' && decision.outcome === 'ok');
  assert.deepEqual(next, { attempt: 3, previousDelayMs: 400, sawUnknown: true });
  assert.ok(Object.isFrozen(INITIAL_RETRY_STATE), 'the shared start state cannot be changed');
});

test('a 409 with Retry-After (a request still in flight) is retried after the wait; a bare 409 is fatal', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 3, jitter: 'none', retryAfterJitterRatio: 0 });
  const [inFlight] = decide(
    INITIAL_RETRY_STATE,
    { kind: 'response', status: 409, retryAfter: '1' },
    0,
    seededRandom(1),
    policy,
  );
  assert.equal(inFlight.action, 'retry');
  assert.equal(inFlight.action === 'retry' && inFlight.delayMs, 1000);
  const [bare] = decide(
    INITIAL_RETRY_STATE,
    { kind: 'response', status: 409 },
    0,
    seededRandom(1),
    policy,
  );
  assert.equal(bare.action === 'stop' && bare.reason, 'fatal_status');
});

// Every stop reason comes from the step: the caller's cancel, the safety of a retry and the shared
// retry budget are inputs, not checks the driver makes around it.

test('inputs: a cancelled caller stops as aborted unless the answer settles the intent', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 5 });
  const aborted = { aborted: true };
  const [ok] = decide(INITIAL_RETRY_STATE, response(200), 0, seededRandom(1), policy, aborted);
  assert.ok(ok.action === 'stop' && ok.reason === 'ok');
  const [fatal] = decide(INITIAL_RETRY_STATE, response(400), 0, seededRandom(1), policy, aborted);
  assert.ok(fatal.action === 'stop' && fatal.reason === 'fatal_status');
  const last = { attempt: 4, previousDelayMs: 0, sawUnknown: false };
  const [cut] = decide(
    last,
    { kind: 'unknown', status: 408, detail: 'aborted' },
    0,
    seededRandom(1),
    policy,
    aborted,
  );
  assert.ok(
    cut.action === 'stop' && cut.reason === 'aborted' && cut.outcome === 'unknown',
    'the cancel beats the budget',
  );
});

test('inputs: mayRetry false turns a retry into unsafe_to_retry, and only a retry', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 2 });
  const [unsafe] = decide(INITIAL_RETRY_STATE, response(503), 0, seededRandom(1), policy, {
    mayRetry: false,
  });
  assert.ok(
    unsafe.action === 'stop' && unsafe.reason === 'unsafe_to_retry' && unsafe.outcome === 'fail',
  );
  const last = { attempt: 1, previousDelayMs: 0, sawUnknown: false };
  const [budget] = decide(last, response(503), 0, seededRandom(1), policy, { mayRetry: false });
  assert.ok(budget.action === 'stop' && budget.reason === 'budget_exhausted');
});

test('inputs: the token bucket prices a retry (more after a timeout) and refuses one it cannot cover', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 5 });
  const tokens = (balance: number) => ({
    balance,
    costOf: (afterTimeout: boolean) => (afterTimeout ? 10 : 5),
  });
  const [paid] = decide(INITIAL_RETRY_STATE, response(503), 0, seededRandom(1), policy, {
    retryTokens: tokens(5),
  });
  assert.ok(paid.action === 'retry' && paid.retryCost === 5);
  const [timeout] = decide(
    INITIAL_RETRY_STATE,
    { kind: 'unknown', status: 408, detail: 't' },
    0,
    seededRandom(1),
    policy,
    { retryTokens: tokens(10) },
  );
  assert.ok(timeout.action === 'retry' && timeout.retryCost === 10);
  const [drained] = decide(
    INITIAL_RETRY_STATE,
    { kind: 'unknown', status: 408, detail: 't' },
    0,
    seededRandom(1),
    policy,
    { retryTokens: tokens(9) },
  );
  assert.ok(
    drained.action === 'stop' &&
      drained.reason === 'retry_budget_drained' &&
      drained.outcome === 'unknown',
  );
  const [free] = decide(INITIAL_RETRY_STATE, response(503), 0, seededRandom(1), policy);
  assert.ok(free.action === 'retry' && free.retryCost === 0);
});

test('decideStart: a cancel before any attempt fails, the deadline refuses a start', () => {
  assert.deepEqual(decideStart(INITIAL_RETRY_STATE, 0, { deadlineAt: 10 }, { aborted: true }), {
    reason: 'aborted',
    outcome: 'fail',
  });
  const afterUnknown = { attempt: 1, previousDelayMs: 0, sawUnknown: true };
  assert.deepEqual(decideStart(afterUnknown, 10, { deadlineAt: 10 }), {
    reason: 'deadline_passed',
    outcome: 'unknown',
  });
  assert.equal(decideStart(afterUnknown, 9, { deadlineAt: 10 }), undefined);
});

test('not sent: retried even when mayRetry is false (nothing happened), priced as a plain retry, and a give-up is fail', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 2, ...metronome });
  const refused: Observation = {
    kind: 'not_sent',
    reason: 'connection_refused',
    detail: 'connect ECONNREFUSED',
  };
  const [first, state] = decide(INITIAL_RETRY_STATE, refused, 0, seededRandom(1), policy, {
    mayRetry: false,
  });
  assert.equal(first.action, 'retry');
  assert.ok(
    first.action === 'retry' && first.afterTimeout === false && first.attemptOutcome === 'retry',
  );
  const [last] = decide(state, refused, 100, seededRandom(1), policy, { mayRetry: false });
  assert.ok(
    last.action === 'stop' && last.reason === 'budget_exhausted' && last.outcome === 'fail',
  );
  // After an unknown attempt, a later refused connection does not make the work undone.
  const unknown: Observation = { kind: 'unknown', status: 408, detail: 'reset' };
  const [, afterUnknown] = decide(INITIAL_RETRY_STATE, unknown, 0, seededRandom(1), policy);
  const [final] = decide(afterUnknown, refused, 100, seededRandom(1), policy);
  assert.ok(final.action === 'stop' && final.outcome === 'unknown');
});
