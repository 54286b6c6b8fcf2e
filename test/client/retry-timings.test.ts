import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRetry, retry } from '#oncely/client/retry.js';
import { formatAttempt } from '#cli/cli/commands/format-report.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { VirtualClock } from '#oncely/time/index.js';

/** A virtual clock that counts how often it is read. */
class CountingClock extends VirtualClock {
  reads = 0;
  override now(): number {
    this.reads += 1;
    return super.now();
  }
}

const answer = (status: number, headers: Record<string, string> = {}) => ({
  status,
  headers: new Headers(headers),
});
const metronome = { jitter: 'none', baseDelayMs: 100 } as const;

test('timings: false — a first success reads no clock, and its report says the times were not measured', async () => {
  const clock = new CountingClock({ startAt: 5_000 });
  const timed = createRetry<string>({ clock });
  const untimed = createRetry<string>({ clock, timings: false });

  await timed(() => 'done');
  assert.equal(clock.reads, 2, 'timed by default: the start and the end');

  clock.reads = 0;
  const result = await untimed(() => 'done');
  assert.equal(result.value, 'done');
  assert.equal(clock.reads, 0);
  const { report } = result;
  assert.equal(report.stopReason, 'ok');
  assert.equal(report.attemptCount, 1);
  assert.ok(Number.isNaN(report.startedAt) && Number.isNaN(report.endedAt));
  assert.ok(Number.isNaN(report.attempts[0]!.startedAt));
  assert.match(formatAttempt(report.attempts[0]!, report.startedAt), /^#1\s+\+\?\s+200\s+ok$/);
});

test('timings: false still reads the clock where the policy needs it: a deadline, a retry, a Retry-After', async () => {
  const clock = new CountingClock({ startAt: 1_000 });

  // A deadline: the first attempt is timed, so that the deadline runs from its start.
  const withDeadline = createRetry<string>({ clock, timings: false, deadlineAt: 2_000 });
  const inTime = await withDeadline(async () => {
    await clock.sleep(30);
    return 'done';
  });
  assert.equal(inTime.report.startedAt, 1_000);
  assert.equal(inTime.report.endedAt, 1_030);
  await clock.sleep(2_000);
  await assert.rejects(
    withDeadline(() => 'late'),
    (error: unknown) => (error as { code?: string }).code === 'retry_deadline_passed',
  );

  // A first attempt that is retried: its end is read (the wait is decided on it), not its start.
  const untimed = createRetry<{ status: number; headers: Headers }>({
    clock,
    timings: false,
    ...metronome,
  });
  const startedAt = clock.now();
  let calls = 0;
  const result = await untimed(async () => {
    calls += 1;
    await clock.sleep(40);
    return answer(calls === 1 ? 503 : 201);
  });
  const [first, second] = result.report.attempts;
  assert.ok(Number.isNaN(first!.startedAt));
  assert.equal(first!.endedAt, startedAt + 40);
  assert.equal(first!.delayMs, 100);
  assert.deepEqual([second!.startedAt, second!.endedAt], [startedAt + 140, startedAt + 180]);
  assert.equal(result.report.endedAt, startedAt + 180);

  // A success that carries Retry-After: the step measures it against the clock, so it is read.
  clock.reads = 0;
  const asked = await untimed(() => answer(200, { 'retry-after': '3' }));
  assert.equal(clock.reads, 1);
  assert.equal(asked.report.attempts[0]!.retryAfter?.kind, 'delay');
});

test('timings must be a boolean: anything else is refused, naming the option', async () => {
  await assert.rejects(
    retry(() => 'never', { timings: 'no' as unknown as boolean }),
    (error: unknown) => isInvalidOptionError(error) && /timings/.test(error.message),
  );
  assert.throws(
    () => createRetry({ timings: 0 as unknown as boolean }),
    (error: unknown) => isInvalidOptionError(error) && /timings/.test(error.message),
  );
});
