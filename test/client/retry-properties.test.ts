import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { retry, type AttemptContext } from '#oncely/client/retry.js';
import type { RetryReport } from '#oncely/client/retry-report.js';
import {
  parseRetryAfter,
  formatHttpDate,
  SYNTHETIC_TIMEOUT_STATUS,
} from '#oncely/contract/index.js';
import { JITTERS, type Observation, type RetryPolicyOptions } from '#oncely/policy/index.js';
import { seededRandom, VirtualClock } from '#oncely/time/index.js';
import { runPolicy } from '../support/expect-delays.js';
import { httpDateForms } from '../support/http-date-forms.js';

// Properties of the retry contract. Run counts are modest: the
// whole file takes about a second.

const policyArb = fc
  .record({
    maxAttempts: fc.integer({ min: 1, max: 12 }),
    baseDelayMs: fc.integer({ min: 0, max: 2_000 }),
    maxDelayMs: fc.integer({ min: 0, max: 20_000 }),
    jitter: fc.constantFrom(...JITTERS),
    maxRetryAfterMs: fc.integer({ min: 0, max: 60_000 }),
    retryAfterJitterRatio: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  // A base above the cap is refused (resolveRetryPolicy), never cut to it.
  .map((p) => ({ ...p, maxDelayMs: Math.max(p.maxDelayMs, p.baseDelayMs) })) satisfies fc.Arbitrary<
  Partial<RetryPolicyOptions>
>;

const observationArb: fc.Arbitrary<Observation> = fc.oneof(
  fc
    .constantFrom(200, 408, 425, 429, 500, 502, 503, 504, 400, 418)
    .map((status): Observation => ({ kind: 'response', status })),
  fc.constant<Observation>({
    kind: 'unknown',
    status: SYNTHETIC_TIMEOUT_STATUS,
    detail: 'timeout',
  }),
  fc
    .record({
      status: fc.constantFrom(429, 503),
      retryAfter: fc.oneof(
        fc.integer({ min: 0, max: 90 }).map(String),
        fc.constantFrom('soon', '1.5', ''),
      ),
    })
    .map(({ status, retryAfter }): Observation => ({ kind: 'response', status, retryAfter })),
);

test('property: a delay lies in [0, cap] unless the server asked for more; then it is never shorter than asked', () => {
  fc.assert(
    fc.property(
      policyArb,
      fc.array(observationArb, { minLength: 1, maxLength: 12 }),
      fc.integer(),
      (policy, observations, seed) => {
        const trace = runPolicy(policy, observations, { random: seededRandom(seed) });
        for (const decision of trace.decisions) {
          if (decision.action !== 'retry') continue;
          assert.ok(Number.isFinite(decision.delayMs), `delay ${decision.delayMs}`);
          if (decision.retryAfter.kind === 'delay') {
            const asked = decision.retryAfter.delayMs;
            assert.ok(
              decision.delayMs >= asked,
              `never earlier than asked: ${decision.delayMs} < ${asked}`,
            );
            assert.ok(
              // Bound computed the way decide() adds the stretch: asked * (1 + r) rounds differently
              // from asked + r * asked when r is tiny (1000 * (1 + 5e-324) is 1000, the sum is above).
              decision.delayMs <= Math.ceil(asked + policy.retryAfterJitterRatio * asked),
              `stretched too far: ${decision.delayMs} for ${asked}`,
            );
            assert.ok(asked <= policy.maxRetryAfterMs);
          } else {
            assert.ok(
              decision.delayMs >= 0 && decision.delayMs <= policy.maxDelayMs,
              `${decision.delayMs} outside [0, ${policy.maxDelayMs}]`,
            );
          }
        }
      },
    ),
    { numRuns: 300 },
  );
});

/** Runs retry() on a VirtualClock against scripted observations; each attempt takes `latencyMs[i]`. */
async function runRetry(
  policy: Partial<RetryPolicyOptions>,
  script: readonly Observation[],
  latenciesMs: readonly number[],
  seed: number,
  timings = true,
): Promise<{ report: RetryReport; calls: number; sleeps: number[] }> {
  const clock = new VirtualClock({ startAt: 1_000_000 });
  let calls = 0;
  const operation = async (context: AttemptContext): Promise<Observation> => {
    calls++;
    const latencyMs =
      latenciesMs.length === 0 ? 0 : latenciesMs[(context.attempt - 1) % latenciesMs.length]!;
    await clock.sleep(latencyMs);
    return script[(context.attempt - 1) % script.length]!;
  };
  const options = {
    ...policy,
    ...(policy.deadlineAt === undefined ? {} : { deadlineAt: 1_000_000 + policy.deadlineAt }),
    clock,
    random: seededRandom(seed),
    key: 'prop-key',
    observe: (value: Observation) => value,
    timings,
  };
  const report = await retry(operation, options).then(
    (result) => result.report,
    (error: { report?: RetryReport }) => {
      if (!error.report) throw error;
      return error.report;
    },
  );
  // The operation's own latency sleeps are in clock.sleeps too; keep only the loop's waits.
  const sleeps = report.attempts.flatMap((a) => (a.delayMs === undefined ? [] : [a.delayMs]));
  return { report, calls, sleeps };
}

test('property: attempts never exceed maxAttempts', async () => {
  await fc.assert(
    fc.asyncProperty(
      policyArb,
      fc.array(observationArb, { minLength: 1, maxLength: 6 }),
      fc.integer(),
      async (policy, script, seed) => {
        const { report, calls } = await runRetry(policy, script, [], seed);
        assert.ok(
          report.attemptCount <= policy.maxAttempts,
          `${report.attemptCount} > ${policy.maxAttempts}`,
        );
        assert.equal(calls, report.attemptCount, 'every call is in the report');
        assert.ok(report.attemptCount >= 1);
      },
    ),
    { numRuns: 150 },
  );
});

test('property: no attempt starts at or after the deadline, and no sleep ends past it', async () => {
  await fc.assert(
    fc.asyncProperty(
      policyArb,
      fc.integer({ min: 0, max: 30_000 }),
      fc.array(observationArb, { minLength: 1, maxLength: 6 }),
      fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 4 }),
      fc.integer(),
      async (policy, closesInMs, script, latenciesMs, seed) => {
        const deadlineAt = 1_000_000 + closesInMs;
        const { report } = await runRetry(
          { ...policy, maxAttempts: policy.maxAttempts + 8, deadlineAt: closesInMs },
          script,
          latenciesMs,
          seed,
        );
        for (const attempt of report.attempts) {
          assert.ok(
            attempt.startedAt < deadlineAt,
            `attempt ${attempt.attempt} started at ${attempt.startedAt}, deadline ${deadlineAt}`,
          );
          if (attempt.delayMs !== undefined)
            assert.ok(
              attempt.endedAt + attempt.delayMs < deadlineAt,
              'a sleep would end past the deadline',
            );
        }
        if (closesInMs === 0) assert.equal(report.attemptCount, 0);
      },
    ),
    { numRuns: 150 },
  );
});

test('property: parseRetryAfter never yields a negative number or NaN', () => {
  const dateText = fc
    .tuple(
      fc.date({
        min: new Date('1950-01-01T00:00:00Z'),
        max: new Date('2150-01-01T00:00:00Z'),
        noInvalidDate: true,
      }),
      fc.constantFrom('imfFixdate', 'rfc850', 'asctime') as fc.Arbitrary<
        'imfFixdate' | 'rfc850' | 'asctime'
      >,
    )
    .map(([date, form]) => httpDateForms(date.getTime())[form]);
  const value = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.stringMatching(/^\s*\d{1,40}\s*$/),
    dateText,
  );
  const dateHeader = fc.option(
    fc.oneof(fc.string(), dateText, fc.integer({ min: -1e13, max: 1e13 }).map(formatHttpDate)),
    { nil: undefined },
  );
  fc.assert(
    fc.property(
      value,
      fc.integer({ min: -8.64e15, max: 8.64e15 }),
      dateHeader,
      (raw, nowMs, date) => {
        const parsed = parseRetryAfter(raw, nowMs, date);
        if (parsed.kind === 'delay') {
          assert.ok(!Number.isNaN(parsed.delayMs), `NaN for ${JSON.stringify(raw)}`);
          assert.ok(parsed.delayMs >= 0, `negative for ${JSON.stringify(raw)}`);
          assert.ok(Number.isFinite(parsed.delayMs), `infinite for ${JSON.stringify(raw)}`);
        }
      },
    ),
    { numRuns: 500 },
  );
});

test('property: the same seed gives the same schedule', async () => {
  await fc.assert(
    fc.asyncProperty(
      policyArb,
      fc.array(observationArb, { minLength: 1, maxLength: 8 }),
      fc.integer(),
      async (policy, script, seed) => {
        const a = runPolicy(policy, script, { random: seededRandom(seed) });
        const b = runPolicy(policy, script, { random: seededRandom(seed) });
        assert.deepEqual(a.delays, b.delays);
        assert.deepEqual(a.stop, b.stop);
        const x = await runRetry(policy, script, [], seed);
        const y = await runRetry(policy, script, [], seed);
        assert.deepEqual(x.sleeps, y.sleeps);
        assert.deepEqual(x.report, y.report);
      },
    ),
    { numRuns: 100 },
  );
});

test('property: timings: false decides exactly as a timed loop does; only the first attempt may be unmeasured', async () => {
  await fc.assert(
    fc.asyncProperty(
      policyArb,
      fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: undefined }),
      fc.array(observationArb, { minLength: 1, maxLength: 8 }),
      fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 4 }),
      fc.integer(),
      async (policy, deadlineAt, script, latencies, seed) => {
        const withDeadline = { ...policy, ...(deadlineAt === undefined ? {} : { deadlineAt }) };
        const timed = await runRetry(withDeadline, script, latencies, seed);
        const untimed = await runRetry(withDeadline, script, latencies, seed, false);
        const [first, ...rest] = untimed.report.attempts;
        const [timedFirst, ...timedRest] = timed.report.attempts;
        assert.equal(untimed.calls, timed.calls);
        assert.deepEqual(untimed.sleeps, timed.sleeps);
        assert.deepEqual(rest, timedRest, 'every later attempt is timed');
        assert.deepEqual(
          { ...untimed.report, attempts: [], startedAt: 0, endedAt: 0 },
          { ...timed.report, attempts: [], startedAt: 0, endedAt: 0 },
        );
        if (first === undefined || timedFirst === undefined) return;
        const { startedAt, endedAt, ...judged } = first;
        const { startedAt: s, endedAt: e, ...timedJudged } = timedFirst;
        assert.deepEqual(judged, timedJudged);
        // With a deadline the first attempt is timed; without one it is not.
        assert.equal(Number.isNaN(startedAt), deadlineAt === undefined);
        if (!Number.isNaN(startedAt)) assert.equal(startedAt, s);
        if (!Number.isNaN(endedAt)) assert.equal(endedAt, e);
        // Its end is read whenever the loop went on: the wait was decided on it.
        if (rest.length > 0) assert.equal(endedAt, e);
      },
    ),
    { numRuns: 100 },
  );
});
