import assert from 'node:assert/strict';
import type { Rule, TraceEvent, WorldOutcome, WorldParams } from '#cli/sim/index.js';

/**
 * Replays a trace tick by tick against docs/simulator.md, written independently of the engine:
 * every event must be one the specification allows at that tick, the dispatcher must send when
 * (and what) it should, and the metrics must be the trace's counts. The dispatcher checks cover
 * the fixed-retry-after rules; the adaptive ones draw or learn waits the oracle cannot see.
 */
export function checkTrace(p: WorldParams, rule: Rule, outcome: WorldOutcome): void {
  const trace = outcome.trace;
  assert.ok(trace, 'the trace was recorded');
  const sentAt = new Map<string, number>();
  const arrivedAt = new Map<string, number>();
  const lastSendAt = new Map<number, number>();
  const attempts = new Map<number, number>();
  const confirmedAt = new Map<number, number>();
  const effects = new Map<number, number>();
  const keyStoredAt = new Map<number, number>();
  const cost = rule.keyed ? p.keyedSendCost : p.sendCost;
  const maxAttempts = p.maxAttempts ?? Number.POSITIVE_INFINITY;
  const id = (e: TraceEvent): string => `${e.job}/${e.attempt}`;
  let sends = 0;

  /** Whether the rule may send `job` at `tick` (fixed retry-after only), given the state so far. */
  const sendable = (job: number, tick: number): boolean => {
    const sent = attempts.get(job) ?? 0;
    if (sent === 0) return true;
    if (rule.choice === 'none' || confirmedAt.has(job) || sent >= maxAttempts) return false;
    return tick - lastSendAt.get(job)! >= p.retryAfterTicks;
  };
  const freshLeft = (): boolean => attempts.size < p.jobs;

  const lastTick = Math.max(p.horizonTicks - 1, trace.at(-1)?.tick ?? 0);
  let i = 0;
  for (let tick = 0; tick <= lastTick; tick++) {
    if (tick === p.forgetKeysAt) keyStoredAt.clear();
    let sendsNow = 0;
    for (; i < trace.length && trace[i]!.tick === tick; i++) {
      const e: TraceEvent = trace[i]!;
      switch (e.kind) {
        case 'send': {
          assert.ok(tick < p.horizonTicks, 'dispatch only before the horizon');
          assert.ok(++sendsNow <= p.sendsPerTick, 'at most sendsPerTick sends per tick');
          assert.ok(p.credits - sends * cost >= cost, 'a send only when the credits cover it');
          assert.equal(
            e.attempt,
            (attempts.get(e.job) ?? 0) + 1,
            'attempts count from 1, one by one',
          );
          if (e.attempt === 1) {
            assert.equal(e.job, attempts.size, 'fresh jobs go out first, lowest number first');
          } else {
            assert.ok(rule.choice !== 'none', 'send once never retries');
            assert.ok(!freshLeft(), 'a retry only once every fresh job is out');
            assert.ok(!confirmedAt.has(e.job), 'a confirmed job is never retried');
            assert.ok(e.attempt <= maxAttempts, 'the attempt cap holds');
            const waited = tick - lastSendAt.get(e.job)!;
            if (rule.timeout === 'fixed') {
              assert.ok(waited >= p.retryAfterTicks, 'a retry waits retryAfterTicks');
              if (rule.choice === 'oldest') {
                for (let j = 0; j < e.job; j++)
                  assert.ok(!sendable(j, tick), `job ${j} is older and eligible at ${tick}`);
              }
            } else {
              assert.ok(waited >= 1, 'a retry waits at least a tick');
            }
          }
          attempts.set(e.job, e.attempt);
          lastSendAt.set(e.job, tick);
          sentAt.set(id(e), tick);
          sends++;
          break;
        }
        case 'request-lost':
          assert.equal(sentAt.get(id(e)), tick, 'a request is lost when sent');
          break;
        case 'effect':
        case 'suppressed': {
          const delay = tick - sentAt.get(id(e))!;
          assert.ok(
            delay >= 1 && delay <= p.maxDelayTicks,
            `forward delay ${delay} within 1..${p.maxDelayTicks}`,
          );
          const storedAt = keyStoredAt.get(e.job);
          const alive: boolean =
            rule.keyed &&
            storedAt !== undefined &&
            (p.retentionTicks === null || tick - storedAt < p.retentionTicks);
          assert.equal(
            e.kind === 'suppressed',
            alive,
            `${e.kind} exactly when the key is alive (job ${e.job}, tick ${tick})`,
          );
          if (e.kind === 'effect') {
            effects.set(e.job, (effects.get(e.job) ?? 0) + 1);
            if (rule.keyed) keyStoredAt.set(e.job, tick);
          }
          arrivedAt.set(id(e), tick);
          break;
        }
        case 'receipt-sent':
        case 'receipt-lost':
          assert.equal(arrivedAt.get(id(e)), tick, 'a receipt leaves when its request arrives');
          break;
        case 'confirmed': {
          const delay = tick - arrivedAt.get(id(e))!;
          assert.ok(
            delay >= 1 && delay <= p.maxDelayTicks,
            `return delay ${delay} within 1..${p.maxDelayTicks}`,
          );
          assert.equal(sendsNow, 0, 'receipts are handled before dispatch');
          if (!confirmedAt.has(e.job)) confirmedAt.set(e.job, tick);
          break;
        }
      }
    }
    // Liveness: with room left in this tick and credits to pay, nothing was left sendable.
    const canDispatch =
      tick < p.horizonTicks && sendsNow < p.sendsPerTick && p.credits - sends * cost >= cost;
    if (canDispatch) {
      assert.ok(!freshLeft(), `a fresh job was left unsent at tick ${tick}`);
      if (rule.timeout === 'fixed') {
        for (let j = 0; j < p.jobs; j++)
          assert.ok(
            !sendable(j, tick),
            `job ${j} was sendable at tick ${tick} but nothing was sent`,
          );
      }
    }
  }
  assert.equal(i, trace.length, 'events in tick order');

  const count = (kind: string): number => trace.filter((e) => e.kind === kind).length;
  const m = outcome.metrics;
  assert.equal(m.sends, count('send'));
  assert.equal(m.creditsSpent, m.sends * cost);
  assert.ok(m.creditsSpent <= p.credits, 'credits are a ceiling');
  assert.equal(m.delivered, effects.size);
  assert.equal(m.duplicates, count('effect') - effects.size);
  assert.equal(m.confirmed, confirmedAt.size);
  assert.equal(m.unresolved, p.jobs - m.confirmed);
  assert.equal(count('receipt-sent'), count('effect') + count('suppressed'));
  assert.equal(
    count('effect') + count('suppressed') + count('request-lost'),
    m.sends,
    'every request is lost or arrives',
  );
  assert.equal(
    count('confirmed'),
    count('receipt-sent') - count('receipt-lost'),
    'every receipt is lost or arrives',
  );
}
