import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRetry, type AttemptContext } from '#oncely/client/retry.js';
import { RetryError, type AttemptRecord } from '#oncely/client/retry-report.js';
import { VirtualClock } from '#oncely/time/index.js';

const metronome = { jitter: 'none', baseDelayMs: 100 } as const;
const answer = (status: number) => ({ status, headers: new Headers() });

test('a first-try success reports the attempt as timed on the clock: its start and its end', async () => {
  const clock = new VirtualClock({ startAt: 5_000 });
  const seen: AttemptRecord[] = [];
  const run = createRetry<string>({ clock, onAttempt: (record) => seen.push(record) });
  // The operation's own waits move the virtual clock: the attempt takes 300 ms.
  const result = await run(async () => {
    await clock.sleep(250);
    await clock.sleep(50);
    return 'done';
  });
  assert.equal(result.value, 'done');
  const { report } = result;
  assert.equal(report.startedAt, 5_000);
  assert.equal(report.endedAt, 5_300);
  assert.equal(report.outcome, 'ok');
  assert.equal(report.stopReason, 'ok');
  assert.deepEqual(report.attempts, [
    { attempt: 1, startedAt: 5_000, endedAt: 5_300, outcome: 'ok', status: 200 },
  ]);
  assert.deepEqual(seen, report.attempts, 'onAttempt saw the same record, as it happened');
  assert.equal(result.report, report, 'the report is built once');
  // Time moving on after the call does not change a report built later.
  await clock.sleep(10_000);
  const later = await run(() => 'again');
  assert.equal(later.report.startedAt, 15_300);
  assert.equal(later.report.endedAt, 15_300);
  assert.equal(JSON.stringify(result), JSON.stringify({ value: 'done', report }));
});

test('a first attempt that is retried keeps its own timing in the report', async () => {
  const clock = new VirtualClock({ startAt: 1_000 });
  const run = createRetry<{ status: number; headers: Headers }>({ clock, ...metronome });
  let calls = 0;
  const result = await run(async () => {
    calls += 1;
    await clock.sleep(calls === 1 ? 40 : 7);
    return answer(calls === 1 ? 503 : 201);
  });
  assert.deepEqual(
    result.report.attempts.map(({ attempt, startedAt, endedAt, status, delayMs }) => ({
      attempt,
      startedAt,
      endedAt,
      status,
      delayMs,
    })),
    [
      { attempt: 1, startedAt: 1_000, endedAt: 1_040, status: 503, delayMs: 100 },
      { attempt: 2, startedAt: 1_140, endedAt: 1_147, status: 201, delayMs: undefined },
    ],
  );
  assert.equal(result.report.endedAt, 1_147);
  assert.equal(result.report.totalSleptMs, 100);
});

test("each call's key and signal reach its attempts; a call without them gets the prepared ones", async () => {
  const prepared = new AbortController();
  const own = new AbortController();
  const run = createRetry<number>({ key: 'prepared-key', signal: prepared.signal });
  const contexts: AttemptContext[] = [];
  const operation = (context: AttemptContext): number => {
    contexts.push(context);
    return contexts.length;
  };
  await run(operation);
  await run(operation, { key: 'own-key' });
  await run(operation, { signal: own.signal });
  await run(operation);
  assert.deepEqual(
    contexts.map((c) => [c.attempt, c.key, c.signal === prepared.signal, c.signal === own.signal]),
    [
      [1, 'prepared-key', true, false],
      [1, 'own-key', true, false],
      [1, 'prepared-key', false, true],
      [1, 'prepared-key', true, false],
    ],
  );
});

test('a first attempt that throws at once is judged like a rejection, and retried', async () => {
  const clock = new VirtualClock();
  const run = createRetry<string>({ clock, ...metronome });
  let calls = 0;
  const result = await run(() => {
    calls += 1;
    if (calls === 1) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    return 'second';
  });
  assert.equal(result.value, 'second');
  assert.deepEqual(
    result.report.attempts.map((a) => [a.attempt, a.outcome, a.transport?.reason]),
    [
      [1, 'unknown', 'socket_closed'],
      [2, 'ok', undefined],
    ],
  );
});

test('a throwing observe or onAttempt rejects the call; it never throws synchronously', async () => {
  const boom = new Error('observer bug');
  const throwingObserve = createRetry<number>({
    observe: () => {
      throw boom;
    },
  });
  const throwingProgress = createRetry<number>({
    onAttempt: () => {
      throw boom;
    },
  });
  for (const run of [throwingObserve, throwingProgress]) {
    let pending: Promise<unknown> | undefined;
    assert.doesNotThrow(() => {
      pending = run(() => 1);
    });
    await assert.rejects(pending!, (error) => error === boom);
  }
});

test('a deadline already passed refuses the first attempt with a report, as a rejection', async () => {
  const clock = new VirtualClock({ startAt: 2_000 });
  const run = createRetry<number>({ clock, deadlineAt: 2_000 });
  let calls = 0;
  const error = await run(() => ++calls).then(
    () => assert.fail('expected a refusal'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof RetryError);
  assert.equal(error.report.stopReason, 'deadline_passed');
  assert.equal(error.report.attemptCount, 0);
  assert.equal(error.report.startedAt, 2_000);
  assert.equal(calls, 0);
});
