import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, INITIAL_RETRY_STATE, type RetryState } from '#oncely/policy/index.js';
import { NO_RECEIPT, oncelyJobRandom, oncelyPolicyFor } from '#cli/sim/oncely-client-rule.js';
import { resolveWorldParams, runWorld, type TraceEvent, type WorldParams } from '#cli/sim/index.js';

/** The ticks at which `job` was sent, and the tick its first receipt came back (or undefined). */
function jobHistory(
  trace: readonly TraceEvent[],
  job: number,
): { sends: number[]; confirmedAt: number | undefined } {
  const sends = trace.filter((e) => e.kind === 'send' && e.job === job).map((e) => e.tick);
  return { sends, confirmedAt: trace.find((e) => e.kind === 'confirmed' && e.job === job)?.tick };
}

/**
 * Replays one job's attempts with decide() itself, on the job's own jitter stream: after each send
 * the attempt is judged at its timeout unless a receipt came first; returns the tick each retry
 * becomes due, and why the job stopped when the policy stopped it.
 */
function replayJob(
  p: WorldParams,
  job: number,
  sends: readonly number[],
  confirmedAt: number | undefined,
) {
  const policy = oncelyPolicyFor(p);
  const random = oncelyJobRandom(p.seed, job);
  const unlimited = { balance: Number.POSITIVE_INFINITY, costOf: () => p.keyedSendCost };
  let state: RetryState = INITIAL_RETRY_STATE;
  const dueAt: number[] = [];
  for (const sentAt of sends) {
    const judgedAt = sentAt + p.retryAfterTicks;
    if (confirmedAt !== undefined && confirmedAt <= judgedAt)
      return { dueAt, stop: 'confirmed' as const };
    const [decision, next] = decide(state, NO_RECEIPT, judgedAt, random, policy, {
      retryTokens: unlimited,
    });
    state = next;
    if (decision.action === 'stop') return { dueAt, stop: decision.reason };
    dueAt.push(judgedAt + decision.delayMs);
  }
  return { dueAt, stop: undefined };
}

test('oncely client + key: with room to send at once, every wait is exactly what decide() chose for the same draws', () => {
  let retriesChecked = 0;
  for (let seed = 0; seed < 40; seed++) {
    const p = resolveWorldParams({ seed, sendsPerTick: 1_000, credits: 1_000_000, maxAttempts: 6 });
    const trace = runWorld(p, 'oncely-key').trace!;
    for (let job = 0; job < p.jobs; job++) {
      const { sends, confirmedAt } = jobHistory(trace, job);
      const replay = replayJob(p, job, sends, confirmedAt);
      // Send by send: retry k went out the tick decide() made it due.
      for (let k = 1; k < sends.length; k++) {
        assert.equal(sends[k], replay.dueAt[k - 1], `seed ${seed} job ${job} send ${k + 1}`);
        retriesChecked++;
      }
      // After the last send: a receipt in time, the policy's stop, or a receipt during the wait.
      if (replay.dueAt.length === sends.length) {
        assert.ok(
          confirmedAt !== undefined && confirmedAt <= replay.dueAt.at(-1)!,
          `seed ${seed} job ${job}: a due retry was not sent`,
        );
      } else {
        assert.ok(
          replay.stop === 'confirmed' ||
            replay.stop === 'budget_exhausted' ||
            replay.stop === 'deadline_passed',
          String(replay.stop),
        );
      }
    }
  }
  assert.ok(retriesChecked > 500, `${retriesChecked} retries checked`);
});

test('oncely client + key: one send per tick only postpones a retry, never brings it forward', () => {
  for (let seed = 0; seed < 30; seed++) {
    const p = resolveWorldParams({ seed, credits: 1_000_000 });
    const trace = runWorld(p, 'oncely-key').trace!;
    for (let job = 0; job < p.jobs; job++) {
      const { sends, confirmedAt } = jobHistory(trace, job);
      // A postponed retry is judged later than replayed here, so replay only up to the first delay.
      const replay = replayJob(p, job, sends.slice(0, 2), confirmedAt);
      if (sends.length > 1) assert.ok(sends[1]! >= replay.dueAt[0]!, `seed ${seed} job ${job}`);
    }
  }
});

test('oncely client + key: the credits are its token bucket; a drained bucket stops retries, never fresh jobs', () => {
  for (let seed = 0; seed < 30; seed++) {
    const outcome = runWorld({ seed, credits: 40 }, 'oncely-key');
    const m = outcome.metrics;
    assert.ok(m.creditsSpent <= 40);
    assert.equal(m.creditsSpent, m.sends * 2);
    const firsts = outcome.trace!.filter((e) => e.kind === 'send' && e.attempt === 1).length;
    assert.equal(firsts, 18, 'every fresh job goes out first');
    assert.equal(m.duplicates, 0, 'whole-run keys: never a duplicate');
  }
});
