import assert from 'node:assert/strict';
import type { Rule, TraceEvent, WorldOutcome, WorldParams } from '../../src/sim/index.js';

/**
 * Replays a trace against the world's rules, written independently of the engine: every event
 * must be one the specification allows at that tick, and the metrics must be the trace's counts.
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
  const sendsPerTick = new Map<number, number>();
  let previousTick = 0;
  let forgotten = false;
  const id = (e: TraceEvent): string => `${e.job}/${e.attempt}`;

  for (const [i, e] of trace.entries()) {
    assert.ok(e.tick >= previousTick, `events in tick order (event ${i})`);
    previousTick = e.tick;
    if (p.forgetKeysAt !== null && !forgotten && e.tick >= p.forgetKeysAt) {
      keyStoredAt.clear();
      forgotten = true;
    }
    switch (e.kind) {
      case 'send': {
        assert.ok(e.tick < p.horizonTicks, 'dispatch only before the horizon');
        sendsPerTick.set(e.tick, (sendsPerTick.get(e.tick) ?? 0) + 1);
        assert.ok(sendsPerTick.get(e.tick)! <= p.sendsPerTick, 'at most sendsPerTick sends per tick');
        assert.equal(e.attempt, (attempts.get(e.job) ?? 0) + 1, 'attempts count from 1, one by one');
        attempts.set(e.job, e.attempt);
        if (e.attempt > 1) {
          assert.ok(rule.choice !== 'none', 'send once never retries');
          assert.ok(!confirmedAt.has(e.job), 'a confirmed job is never retried');
          if (rule.timeout === 'fixed') assert.ok(e.tick - lastSendAt.get(e.job)! >= p.retryAfterTicks, 'a retry waits retryAfterTicks');
          else assert.ok(e.tick - lastSendAt.get(e.job)! >= 1, 'a retry waits at least a tick');
        }
        if (p.maxAttempts !== null) assert.ok(e.attempt <= p.maxAttempts, 'the attempt cap holds');
        lastSendAt.set(e.job, e.tick);
        sentAt.set(id(e), e.tick);
        break;
      }
      case 'request-lost':
        assert.equal(sentAt.get(id(e)), e.tick, 'a request is lost when sent');
        break;
      case 'effect':
      case 'suppressed': {
        const delay = e.tick - sentAt.get(id(e))!;
        assert.ok(delay >= 1 && delay <= p.maxDelayTicks, `forward delay ${delay} within 1..${p.maxDelayTicks}`);
        const storedAt = keyStoredAt.get(e.job);
        const alive = rule.keyed && storedAt !== undefined && (p.retentionTicks === null || e.tick - storedAt < p.retentionTicks);
        assert.equal(e.kind === 'suppressed', alive, `${e.kind} exactly when the key is alive (job ${e.job}, tick ${e.tick})`);
        if (e.kind === 'effect') {
          effects.set(e.job, (effects.get(e.job) ?? 0) + 1);
          if (rule.keyed) keyStoredAt.set(e.job, e.tick);
        }
        arrivedAt.set(id(e), e.tick);
        break;
      }
      case 'receipt-sent':
      case 'receipt-lost':
        assert.equal(arrivedAt.get(id(e)), e.tick, 'a receipt leaves when its request arrives');
        break;
      case 'confirmed': {
        const delay = e.tick - arrivedAt.get(id(e))!;
        assert.ok(delay >= 1 && delay <= p.maxDelayTicks, `return delay ${delay} within 1..${p.maxDelayTicks}`);
        if (!confirmedAt.has(e.job)) confirmedAt.set(e.job, e.tick);
        break;
      }
    }
  }

  const count = (kind: string): number => trace.filter((e) => e.kind === kind).length;
  const cost = rule.keyed ? p.keyedSendCost : p.sendCost;
  const m = outcome.metrics;
  assert.equal(m.sends, count('send'));
  assert.equal(m.creditsSpent, m.sends * cost);
  assert.ok(m.creditsSpent <= p.credits, 'credits are a ceiling');
  assert.equal(m.delivered, effects.size);
  assert.equal(m.duplicates, count('effect') - effects.size);
  assert.equal(m.confirmed, confirmedAt.size);
  assert.equal(m.unresolved, p.jobs - m.confirmed);
  assert.equal(count('receipt-sent'), count('effect') + count('suppressed'));
  assert.equal(count('effect') + count('suppressed') + count('request-lost'), m.sends, 'every request is lost or arrives');
  assert.equal(count('confirmed'), count('receipt-sent') - count('receipt-lost'), 'every receipt is lost or arrives');
}
