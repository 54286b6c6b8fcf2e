import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retry, type AttemptContext, type RetryOptions } from '#oncely/client/retry.js';
import {
  isRetryError,
  RetryError,
  summarizeReport,
  type AttemptRecord,
} from '#oncely/client/retry-report.js';
import { RetryTokenBucket } from '#oncely/policy/index.js';
import {
  formatHttpDate,
  InvalidKeyError,
  InvalidOptionError,
  isOncelyError,
} from '#oncely/contract/index.js';
import { seededRandom, VirtualClock } from '#oncely/time/index.js';

interface Answer {
  readonly status: number;
  readonly headers: Headers;
}
const answer = (status: number, headers: Record<string, string> = {}): Answer => ({
  status,
  headers: new Headers(headers),
});

/** An operation that answers from a script, one entry per attempt; an Error entry is thrown. */
function scripted(
  script: ReadonlyArray<Answer | Error>,
): ((context: AttemptContext) => Promise<Answer>) & { calls: AttemptContext[] } {
  const calls: AttemptContext[] = [];
  const operation = async (context: AttemptContext): Promise<Answer> => {
    calls.push(context);
    const next = script[Math.min(calls.length, script.length) - 1]!;
    if (next instanceof Error) throw next;
    return next;
  };
  return Object.assign(operation, { calls });
}

async function failure(promise: Promise<unknown>): Promise<RetryError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RetryError, `expected a RetryError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the retry loop to give up');
}

const timeout = (): Error =>
  new DOMException('The operation timed out', 'TimeoutError') as unknown as Error;
const metronome = {
  jitter: 'none',
  baseDelayMs: 100,
  retryAfterJitterRatio: 0,
} as const satisfies Partial<RetryOptions<unknown>>;

test('every attempt gets the same key, and attempts count from 1', async () => {
  const clock = new VirtualClock();
  const op = scripted([answer(503), timeout(), answer(200)]);
  const { report } = await retry(op, {
    key: 'achen:lab3:v1',
    clock,
    random: seededRandom(1),
    maxAttempts: 3,
  });
  assert.deepEqual(
    op.calls.map((c) => c.key),
    ['achen:lab3:v1', 'achen:lab3:v1', 'achen:lab3:v1'],
  );
  assert.deepEqual(
    op.calls.map((c) => c.attempt),
    [1, 2, 3],
  );
  assert.equal(report.key, 'achen:lab3:v1');
});

test('the report shows every attempt: start, status, outcome, the delay chosen and why', async () => {
  const clock = new VirtualClock({ startAt: 10_000 });
  const op = async (context: AttemptContext): Promise<Answer> => {
    await clock.sleep(30); // each attempt takes 30 ms
    return [answer(503, { 'Retry-After': '1' }), answer(502), answer(200)][context.attempt - 1]!;
  };
  const { value, report } = await retry(op, { clock, ...metronome, maxAttempts: 5 });
  assert.equal(value.status, 200);
  assert.equal(report.outcome, 'ok');
  assert.equal(report.stopReason, 'ok');
  assert.equal(report.attemptCount, 3);
  assert.equal(report.lastNon2xxStatus, 502);
  assert.equal(report.totalSleptMs, 1_200, 'only the waits between attempts, not the attempts');
  assert.deepEqual(
    report.attempts.map(
      ({ attempt, startedAt, endedAt, status, outcome, delayMs, delayReason }) => ({
        attempt,
        startedAt,
        endedAt,
        status,
        outcome,
        delayMs,
        delayReason,
      }),
    ),
    [
      {
        attempt: 1,
        startedAt: 10_000,
        endedAt: 10_030,
        status: 503,
        outcome: 'retry',
        delayMs: 1_000,
        delayReason: 'retry-after',
      },
      {
        attempt: 2,
        startedAt: 11_030,
        endedAt: 11_060,
        status: 502,
        outcome: 'retry',
        delayMs: 200,
        delayReason: 'backoff',
      },
      {
        attempt: 3,
        startedAt: 11_260,
        endedAt: 11_290,
        status: 200,
        outcome: 'ok',
        delayMs: undefined,
        delayReason: undefined,
      },
    ],
  );
  assert.deepEqual(report.attempts[0]?.retryAfter, {
    kind: 'delay',
    raw: '1',
    delayMs: 1_000,
    measuredAgainst: 'delta',
  });
  assert.equal(report.startedAt, 10_000);
  assert.equal(report.endedAt, 11_290);
  // The webhook storm (docs/origins.md): a success after retries is never summarised without its count and last non-2xx.
  assert.equal(
    summarizeReport(report),
    'ok (stop:ok) after 3 attempts, last non-2xx status 502, slept 1200 ms',
  );
});

test('a first-try success reports one attempt and no sleep', async () => {
  const clock = new VirtualClock();
  const { value, report } = await retry(() => 'done', { clock });
  assert.equal(value, 'done');
  assert.equal(report.attemptCount, 1);
  assert.equal(report.lastNon2xxStatus, undefined);
  assert.equal(report.totalSleptMs, 0);
  assert.deepEqual(clock.sleeps, []);
});

test('the webhook storm through retry(): 429 with a real Retry-After header waits 2-3 s; 400 sleeps 0', async () => {
  for (let seed = 0; seed < 20; seed++) {
    const clock = new VirtualClock();
    const op = scripted([
      new Response(null, { status: 429, headers: { 'Retry-After': '2' } }) as Answer,
      answer(200),
    ]);
    const { report } = await retry(op, { clock, random: seededRandom(seed) });
    assert.equal(clock.sleeps.length, 1);
    assert.ok(clock.sleeps[0]! >= 2_000 && clock.sleeps[0]! <= 3_000, `slept ${clock.sleeps[0]}`);
    assert.equal(report.totalSleptMs, clock.sleeps[0]);
  }
  const clock = new VirtualClock();
  const error = await failure(
    retry(scripted([answer(400, { 'Retry-After': '2' })]), { clock, maxAttempts: 5 }),
  );
  assert.equal(error.report.stopReason, 'fatal_status');
  assert.equal(error.report.outcome, 'fail');
  assert.equal(error.report.attemptCount, 1);
  assert.equal(error.report.totalSleptMs, 0);
  assert.deepEqual(clock.sleeps, []);
});

test('a Retry-After date is measured against the response Date, not our skewed clock', async () => {
  const clock = new VirtualClock({ startAt: Date.UTC(2026, 2, 14, 12, 0, 0) });
  const skewMs = 3_600_000; // the server's clock is an hour behind ours
  const op = async (context: AttemptContext): Promise<Answer> => {
    const serverNow = clock.now() - skewMs;
    if (context.attempt > 1) return answer(200);
    return answer(503, {
      'Retry-After': formatHttpDate(serverNow + 5_000),
      Date: formatHttpDate(serverNow),
    });
  };
  const { report } = await retry(op, { clock, ...metronome });
  assert.deepEqual(clock.sleeps, [5_000]);
  const retryAfter = report.attempts[0]?.retryAfter;
  assert.ok(retryAfter?.kind === 'delay' && retryAfter.measuredAgainst === 'server-date');
});

test('without a Date header, a Retry-After date is measured on the local clock, and the report says so', async () => {
  const clock = new VirtualClock({ startAt: Date.UTC(2026, 2, 14, 12, 0, 0) });
  const op = scripted([
    answer(503, { 'Retry-After': formatHttpDate(clock.now() + 3_000) }),
    answer(200),
  ]);
  const { report } = await retry(op, { clock, ...metronome });
  assert.deepEqual(clock.sleeps, [3_000]);
  const retryAfter = report.attempts[0]?.retryAfter;
  assert.ok(retryAfter?.kind === 'delay' && retryAfter.measuredAgainst === 'local-clock');
});

test('an unparsable Retry-After is reported as such, and the default backoff is used', async () => {
  const clock = new VirtualClock();
  const { report } = await retry(
    scripted([answer(503, { 'Retry-After': 'in a while' }), answer(200)]),
    { clock, ...metronome },
  );
  assert.equal(report.attempts[0]?.delayReason, 'retry-after-unparsed');
  assert.deepEqual(report.attempts[0]?.retryAfter, { kind: 'unparsed', raw: 'in a while' });
  assert.deepEqual(clock.sleeps, [100]);
});

test('a Retry-After past maxRetryAfterMs stops with retry_after_too_long, without sleeping', async () => {
  const clock = new VirtualClock();
  const op = scripted([answer(503, { 'Retry-After': '60' }), answer(200)]);
  const error = await failure(retry(op, { clock }));
  assert.equal(error.report.stopReason, 'retry_after_too_long');
  assert.equal(error.report.attemptCount, 1);
  assert.deepEqual(clock.sleeps, []);
  assert.equal(op.calls.length, 1);
});

test('a Retry-After past the deadline stops at once, without sleeping', async () => {
  const clock = new VirtualClock();
  const error = await failure(
    retry(scripted([answer(429, { 'Retry-After': '10' })]), {
      clock,
      deadlineAt: 5_000,
      maxAttempts: 10,
    }),
  );
  assert.equal(error.report.stopReason, 'retry_after_too_long');
  assert.deepEqual(clock.sleeps, []);
  assert.equal(clock.now(), 0);
});

test('deadline: no attempt starts at or after deadlineAt, and no sleep ends past it', async () => {
  const clock = new VirtualClock();
  const op = async (): Promise<Answer> => {
    await clock.sleep(400);
    return answer(503);
  };
  const error = await failure(
    retry(op, { clock, ...metronome, deadlineAt: 1_000, maxAttempts: 10 }),
  );
  assert.equal(error.report.stopReason, 'deadline_passed');
  assert.deepEqual(
    error.report.attempts.map((a) => a.startedAt),
    [0, 500],
  );
  assert.equal(
    error.report.totalSleptMs,
    100,
    'the 200 ms wait after the second attempt would have ended at 1100',
  );
});

test('closesAt, the deprecated name of deadlineAt, still sets the deadline', async () => {
  const clock = new VirtualClock({ startAt: 2_000 });
  const op = scripted([answer(200)]);
  const error = await failure(retry(op, { clock, closesAt: 2_000 }));
  assert.equal(error.report.stopReason, 'deadline_passed');
  assert.equal(op.calls.length, 0);
});

test('a deadline already passed runs no attempt at all', async () => {
  const clock = new VirtualClock({ startAt: 2_000 });
  const op = scripted([answer(200)]);
  const error = await failure(retry(op, { clock, deadlineAt: 2_000 }));
  assert.equal(error.report.stopReason, 'deadline_passed');
  assert.equal(error.report.attemptCount, 0);
  assert.equal(op.calls.length, 0);
});

test('abort cancels a pending sleep and stops with aborted', async () => {
  const clock = new VirtualClock({ autoAdvance: false });
  const controller = new AbortController();
  const running = retry(scripted([answer(503)]), {
    clock,
    ...metronome,
    signal: controller.signal,
    maxAttempts: 5,
  });
  await clock.advance(50);
  assert.equal(clock.pendingCount, 1, 'the loop is asleep, half way through its 100 ms wait');
  controller.abort();
  const error = await failure(running);
  assert.equal(error.report.stopReason, 'aborted');
  assert.equal(error.report.outcome, 'fail');
  assert.equal(error.report.attemptCount, 1);
  assert.equal(error.report.totalSleptMs, 50);
  assert.equal(clock.pendingCount, 0, 'the timer is gone');
  assert.equal(clock.now(), 50);
});

test('an abort before the start runs nothing', async () => {
  const op = scripted([answer(200)]);
  const error = await failure(
    retry(op, { clock: new VirtualClock(), signal: AbortSignal.abort() }),
  );
  assert.equal(error.report.stopReason, 'aborted');
  assert.equal(op.calls.length, 0);
});

test('an abort during the last attempt is reported as aborted and unknown, not as the budget', async () => {
  // Regression: the stop reason used to be budget_exhausted, hiding that the caller cancelled.
  const clock = new VirtualClock({ autoAdvance: false });
  const controller = new AbortController();
  const op = ({ signal }: AttemptContext): Promise<Answer> =>
    new Promise((_resolve, reject) =>
      signal?.addEventListener('abort', () => reject(signal.reason)),
    );
  const running = retry(op, { clock, signal: controller.signal, maxAttempts: 1 });
  await clock.advance(0);
  controller.abort();
  const error = await failure(running);
  assert.equal(error.report.stopReason, 'aborted');
  assert.equal(error.report.outcome, 'unknown', 'the request may have reached the server');
  assert.equal(error.report.attempts[0]?.detail, 'aborted');
});

test('an unknown (TimeoutError) then an exhausted budget is reported unknown, never fail', async () => {
  const clock = new VirtualClock();
  const error = await failure(retry(scripted([timeout()]), { clock, key: 'k', maxAttempts: 3 }));
  assert.equal(error.report.outcome, 'unknown');
  assert.equal(error.report.stopReason, 'budget_exhausted');
  assert.equal(error.report.lastNon2xxStatus, undefined, 'no status the server never sent');
  assert.deepEqual(
    error.report.attempts.map((a) => a.transport),
    Array(3).fill({ sent: true, reason: 'timed_out' }),
  );
  assert.deepEqual(
    error.report.attempts.map((a) => a.outcome),
    ['unknown', 'unknown', 'unknown'],
  );
  assert.match(error.report.attempts[0]?.detail ?? '', /timed out/);

  const mixed = await failure(
    retry(scripted([timeout(), answer(503)]), { clock, key: 'k', maxAttempts: 3 }),
  );
  assert.equal(
    mixed.report.outcome,
    'unknown',
    'later 503s do not turn a possible success into a refusal',
  );
  assert.equal(mixed.report.lastNon2xxStatus, 503);
});

test('an ordinary error fails at once with the error as cause', async () => {
  const bug = new Error('undefined is not a function');
  const error = await failure(retry(scripted([bug]), { clock: new VirtualClock() }));
  assert.equal(error.report.stopReason, 'operation_failed');
  assert.equal(error.report.outcome, 'fail');
  assert.equal(error.cause, bug);
  assert.equal(error.report.attempts[0]?.detail, 'undefined is not a function');
});

test('RetryError carries the report, the last value and a stable code', async () => {
  const last = answer(503);
  const error = await failure(
    retry(scripted([last]), { clock: new VirtualClock(), maxAttempts: 2 }),
  );
  assert.ok(isRetryError(error) && isOncelyError(error));
  assert.equal(error.code, 'retry_budget_exhausted');
  assert.equal(error.lastValue, last);
  assert.match(
    error.message,
    /^fail \(stop:budget_exhausted\) after 2 attempts, last non-2xx status 503, slept \d+ ms$/,
  );
});

test('mayRetry false runs once and stops unsafe_to_retry; onAttempt still sees the attempt', async () => {
  const seen: AttemptRecord[] = [];
  const error = await failure(
    retry(scripted([answer(503)]), {
      clock: new VirtualClock(),
      mayRetry: false,
      onAttempt: (r) => seen.push(r),
    }),
  );
  assert.equal(error.report.stopReason, 'unsafe_to_retry');
  assert.equal(error.report.attemptCount, 1);
  assert.equal(error.report.attempts[0]?.delayMs, undefined, 'no delay was taken');
  assert.equal(seen.length, 1, 'regression: the last attempt was not shown to onAttempt');
});

test('a shared retry budget: a drained bucket stops with retry_budget_drained, across calls', async () => {
  const bucket = new RetryTokenBucket({ capacity: 5 });
  const seen: AttemptRecord[] = [];
  const clock = new VirtualClock();
  const first = await failure(
    retry(scripted([answer(503)]), {
      clock,
      retryBudget: bucket,
      maxAttempts: 5,
      onAttempt: (r) => seen.push(r),
    }),
  );
  assert.equal(first.report.stopReason, 'retry_budget_drained');
  assert.equal(first.report.attemptCount, 2);
  assert.equal(first.report.retryBudgetBalance, 0);
  assert.equal(seen.length, 2);
  const second = await failure(
    retry(scripted([answer(503)]), { clock, retryBudget: bucket, maxAttempts: 5 }),
  );
  assert.equal(second.report.stopReason, 'retry_budget_drained');
  assert.equal(
    second.report.attemptCount,
    1,
    'the first attempt still goes through; its retry does not',
  );
});

test('a retry after a timeout costs 10 tokens, and a success refunds the last retry', async () => {
  const clock = new VirtualClock();
  const bucket = new RetryTokenBucket();
  await retry(scripted([timeout(), answer(200)]), { clock, key: 'k', retryBudget: bucket });
  assert.equal(bucket.balance, 500, '500 - 10 + 10');
  await retry(scripted([answer(503), answer(503), answer(200)]), { clock, retryBudget: bucket });
  assert.equal(bucket.balance, 495, '500 - 5 - 5 + 5');
  const { report } = await retry(() => 'ok', { clock, retryBudget: bucket });
  assert.equal(report.retryBudgetBalance, 496, 'a success without a retry earns 1');
});

test('bad options are refused before the operation runs, naming the option and range', async () => {
  const op = scripted([answer(200)]);
  const cases: Array<[Partial<RetryOptions<Answer>>, RegExp]> = [
    [{ maxAttempts: 0 }, /^invalid option maxAttempts: got 0, expected an integer >= 1$/],
    [
      { maxAttempts: Number.NaN },
      /^invalid option maxAttempts: got NaN, expected an integer >= 1$/,
    ],
    [
      { maxDelayMs: -1 },
      /^invalid option maxDelayMs: got -1, expected a finite number of milliseconds >= 0$/,
    ],
    [
      { jitter: 'wobbly' as 'full' },
      /^invalid option jitter: got "wobbly", expected one of none, full, equal, decorrelated$/,
    ],
    [
      { mayRetry: 'yes' as unknown as boolean },
      /^invalid option mayRetry: got "yes", expected a boolean$/,
    ],
  ];
  for (const [options, message] of cases) {
    await assert.rejects(retry(op, { clock: new VirtualClock(), ...options }), (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError);
      assert.match(error.message, message);
      return true;
    });
  }
  await assert.rejects(
    retry(op, { key: '  ' }),
    (error: unknown) =>
      error instanceof InvalidKeyError && error.message === 'empty idempotency key',
  );
  await assert.rejects(retry(op, { key: 'clé' }), InvalidKeyError);
  assert.equal(op.calls.length, 0);
});
