import { backoffDelayMs, type BackoffOptions } from 'oncely/policy';
import type { Random } from 'oncely/policy';
import { seededRandom } from 'oncely/policy';
import type { MatchedDraws } from './matched-draws.js';
import { MessageQueue } from './message-queue.js';
import { OncelyClientRule } from './oncely-client-rule.js';
import { RoundTripEstimator } from './round-trip-estimator.js';
import type { Rule } from './rules.js';
import type { TraceEvent, TraceKind } from './trace.js';
import type { WorldParams } from './world-params.js';

/**
 * Streams beside the matched draws, seeded by (seed, STREAM_JOB, purpose). No job has the number
 * 0xffffffff, so these never collide with a (seed, job, attempt) stream.
 */
const STREAM_JOB = 0xffff_ffff;
const RANDOM_CHOICE_STREAM = 1;
const BACKOFF_JITTER_STREAM = 2;

/** What one run of a world counted, before it is shaped into metrics. */
export interface WorldCounts {
  readonly effects: readonly number[];
  readonly confirmedAt: readonly number[];
  readonly sends: number;
  readonly creditsLeft: number;
  readonly trace: TraceEvent[] | undefined;
}

/**
 * One world under one rule, for already-validated params. Each tick, in this order
 * (docs/simulator.md): forget keys if due, request arrivals (effects), receipt arrivals
 * (confirmations), the policy's timeouts, dispatch.
 */
export class WorldRun {
  private readonly jobs: number;
  private readonly maxAttempts: number;
  private readonly retentionTicks: number;
  private readonly cost: number;
  // Per-job state in plain small-integer arrays: a world is short-lived, and typed arrays cost
  // more to allocate than these few slots are worth.
  private readonly attempts: number[];
  private readonly lastSendAt: number[];
  private readonly waitTicks: number[];
  private readonly confirmedAt: number[];
  private readonly effects: number[];
  private readonly keyStoredAt: number[];
  // Messages in flight, listed per arrival tick. A message arrives 1 … maxDelayTicks after it
  // leaves, so a ring of maxDelayTicks + 1 slots holds everything: slots 0 … ringSize − 1 for
  // requests, the next ringSize for receipts. Each list keeps send order, which is the order
  // same-tick arrivals are handled in.
  private readonly ringSize: number;
  private readonly queue: MessageQueue;
  private readonly receipts: number;
  private inFlight = 0;
  private readonly choiceRandom: Random | undefined;
  private readonly jitterRandom: Random | undefined;
  private readonly backoff: BackoffOptions;
  private readonly estimator: RoundTripEstimator | undefined;
  // oncely's client: a job is judged by decide() at its attempt's timeout; until then (and for
  // good, once the policy stops it) it is not eligible. The bucket holds the credits.
  private readonly client: OncelyClientRule | undefined;
  private readonly judgeAt: number[] | undefined;
  private readonly trace: TraceEvent[] | undefined;
  private credits: number;
  private sends = 0;
  private nextFresh = 0;
  // After a scan that finds no eligible job, none can become eligible before this tick: sends
  // and confirmations only push eligibility later. A new learned timeout may bring it closer,
  // so observing a round trip resets it. A pure speed-up: the same jobs are picked without it.
  private noneEligibleBefore = 0;

  constructor(
    private readonly p: WorldParams,
    private readonly rule: Rule,
    private readonly draws: MatchedDraws,
    record: boolean,
  ) {
    const jobs = p.jobs;
    this.jobs = jobs;
    this.maxAttempts = p.maxAttempts ?? Number.POSITIVE_INFINITY;
    this.retentionTicks = p.retentionTicks ?? Number.POSITIVE_INFINITY;
    this.cost = rule.keyed ? p.keyedSendCost : p.sendCost;
    this.attempts = new Array<number>(jobs).fill(0);
    this.lastSendAt = new Array<number>(jobs).fill(0);
    this.waitTicks = new Array<number>(jobs).fill(p.retryAfterTicks);
    this.confirmedAt = new Array<number>(jobs).fill(-1);
    this.effects = new Array<number>(jobs).fill(0);
    this.keyStoredAt = new Array<number>(jobs).fill(-1);
    this.ringSize = p.maxDelayTicks + 1;
    this.queue = new MessageQueue(2 * this.ringSize);
    this.receipts = this.ringSize;
    this.choiceRandom =
      rule.choice === 'random' ? seededRandom(p.seed, STREAM_JOB, RANDOM_CHOICE_STREAM) : undefined;
    this.jitterRandom =
      rule.timeout === 'backoff'
        ? seededRandom(p.seed, STREAM_JOB, BACKOFF_JITTER_STREAM)
        : undefined;
    this.backoff = {
      baseDelayMs: p.retryAfterTicks,
      maxDelayMs: p.maxRetryAfterTicks,
      jitter: 'full',
    };
    this.estimator =
      rule.timeout === 'learned'
        ? new RoundTripEstimator(p.retryAfterTicks, p.maxRetryAfterTicks)
        : undefined;
    this.client = rule.timeout === 'policy' ? new OncelyClientRule(p, this.cost) : undefined;
    this.judgeAt = this.client ? new Array<number>(jobs).fill(-1) : undefined;
    this.trace = record ? [] : undefined;
    this.credits = p.credits;
  }

  /** Runs every tick (or until nothing is in flight and nothing is left to send). */
  run(): WorldCounts {
    const { horizonTicks, sendsPerTick } = this.p;
    const forgetKeysAt = this.p.forgetKeysAt ?? -1;
    // Every message sent by the last dispatch tick arrives within two legs of maxDelayTicks.
    const endTick = horizonTicks + 2 * this.p.maxDelayTicks;
    for (let tick = 0; tick < endTick; tick++) {
      if (tick === forgetKeysAt) this.keyStoredAt.fill(-1);
      const slot = tick % this.ringSize;
      this.requestsArrive(tick, slot);
      this.receiptsArrive(tick, slot);
      if (this.client) this.judgeTimeouts(this.client, tick);
      if (tick < horizonTicks) {
        for (let s = 0; s < sendsPerTick && this.credits >= this.cost; s++) {
          const job = this.pick(tick);
          if (job < 0) break;
          this.send(job, tick);
        }
      }
      // Nothing in flight and nothing left to send: the remaining ticks would record nothing.
      if (this.inFlight === 0 && !this.mayStillSend(tick)) break;
    }
    return {
      effects: this.effects,
      confirmedAt: this.confirmedAt,
      sends: this.sends,
      creditsLeft: this.credits,
      trace: this.trace,
    };
  }

  private emit(tick: number, kind: TraceKind, job: number, attempt: number): void {
    this.trace?.push({ tick, kind, job, attempt });
  }

  /** The receiver: each request is an effect, unless its key is stored and not yet expired. */
  private requestsArrive(tick: number, slot: number): void {
    const { queue, keyStoredAt, draws } = this;
    const keyed = this.rule.keyed;
    for (let m = queue.take(slot); m >= 0; m = queue.next(m)) {
      const job = queue.job(m);
      const attempt = queue.attempt(m);
      this.inFlight--;
      const storedAt = keyStoredAt[job]!;
      if (keyed && storedAt >= 0 && tick - storedAt < this.retentionTicks) {
        // Suppressing a repeat does not refresh the key (docs/origins.md, "The retry-rule simulator").
        this.emit(tick, 'suppressed', job, attempt);
      } else {
        this.effects[job]!++;
        // Stored atomically with the effect; after expiry or a reset the key is stored anew.
        if (keyed) keyStoredAt[job] = tick;
        this.emit(tick, 'effect', job, attempt);
      }
      this.emit(tick, 'receipt-sent', job, attempt);
      if (draws.receiptLost(job, attempt)) {
        this.emit(tick, 'receipt-lost', job, attempt);
      } else {
        queue.push(
          this.receipts + ((tick + draws.returnDelayTicks(job, attempt)) % this.ringSize),
          job,
          attempt,
        );
        this.inFlight++;
      }
    }
  }

  /** The sender: the first receipt of a job confirms it. */
  private receiptsArrive(tick: number, slot: number): void {
    const { queue, confirmedAt, estimator } = this;
    for (let m = queue.take(this.receipts + slot); m >= 0; m = queue.next(m)) {
      const job = queue.job(m);
      const attempt = queue.attempt(m);
      this.inFlight--;
      this.emit(tick, 'confirmed', job, attempt);
      if (confirmedAt[job]! >= 0) continue;
      confirmedAt[job] = tick;
      // Karn's rule: after a retry, a receipt does not say which send it answers.
      if (estimator && this.attempts[job] === 1) {
        estimator.observe(tick - this.lastSendAt[job]!);
        this.noneEligibleBefore = 0;
      }
    }
  }

  /**
   * Timeouts fire after this tick's receipts (a receipt on the timeout tick is in time), in job
   * order, so the shared bucket is read in one deterministic order.
   */
  private judgeTimeouts(client: OncelyClientRule, tick: number): void {
    const judgeAt = this.judgeAt!;
    for (let j = 0; j < this.jobs; j++) {
      if (judgeAt[j] !== tick) continue;
      judgeAt[j] = -1;
      if (this.confirmedAt[j]! >= 0) continue;
      const decision = client.judgeTimeout(j, tick);
      if (decision.action === 'retry') {
        this.waitTicks[j] = this.p.retryAfterTicks + decision.delayMs;
        this.noneEligibleBefore = 0;
      }
    }
  }

  /** Unconfirmed, under the attempt cap, and waited long enough since its last send. */
  private eligible(job: number, tick: number, wait: number): boolean {
    return (
      this.confirmedAt[job]! < 0 &&
      this.attempts[job]! < this.maxAttempts &&
      tick - this.lastSendAt[job]! >= (wait < 0 ? this.waitTicks[job]! : wait)
    );
  }

  /** The job to send now, or -1: fresh jobs first, then a retry chosen by the rule. */
  private pick(tick: number): number {
    const { jobs } = this;
    const { choice, timeout } = this.rule;
    if (this.nextFresh < jobs) return this.nextFresh++;
    if (choice === 'none' || tick < this.noneEligibleBefore) return -1;
    // One wait for every job, or -1 for each job's own (backoff draws one per send).
    const wait =
      timeout === 'fixed'
        ? this.p.retryAfterTicks
        : timeout === 'learned'
          ? this.estimator!.timeoutTicks
          : -1;
    let count = 0;
    let soonest = Number.POSITIVE_INFINITY;
    for (let j = 0; j < jobs; j++) {
      if (this.eligible(j, tick, wait)) {
        // The oldest job is the lowest-numbered: jobs are created in number order at tick 0.
        if (choice === 'oldest') return j;
        count++;
      } else if (this.confirmedAt[j]! < 0 && this.attempts[j]! < this.maxAttempts) {
        soonest = Math.min(soonest, this.lastSendAt[j]! + (wait < 0 ? this.waitTicks[j]! : wait));
      }
    }
    if (count === 0) {
      this.noneEligibleBefore = soonest;
      return -1;
    }
    let chosen = Math.floor(this.choiceRandom!.next() * count);
    for (let j = 0; j < jobs; j++) if (this.eligible(j, tick, wait) && chosen-- === 0) return j;
    return -1;
  }

  private send(job: number, tick: number): void {
    const { draws } = this;
    const attempt = ++this.attempts[job]!;
    this.lastSendAt[job] = tick;
    this.credits -= this.cost;
    if (this.client) {
      this.client.bucket.tryAcquire(this.cost);
      this.waitTicks[job] = Number.POSITIVE_INFINITY;
      this.judgeAt![job] = tick + this.p.retryAfterTicks;
    }
    this.sends++;
    if (this.jitterRandom)
      this.waitTicks[job] = Math.max(1, backoffDelayMs(attempt, this.backoff, this.jitterRandom));
    this.emit(tick, 'send', job, attempt);
    if (draws.requestLost(job, attempt)) {
      this.emit(tick, 'request-lost', job, attempt);
      return;
    }
    this.queue.push((tick + draws.forwardDelayTicks(job, attempt)) % this.ringSize, job, attempt);
    this.inFlight++;
  }

  /** True while some job could still be sent: the run may end early once this is false and nothing is in flight. */
  private mayStillSend(tick: number): boolean {
    if (tick + 1 >= this.p.horizonTicks || this.credits < this.cost) return false;
    if (this.nextFresh < this.jobs) return true;
    if (this.rule.choice === 'none') return false;
    for (let j = 0; j < this.jobs; j++) {
      // A job the policy gave up on (judged, and still never eligible) will not be sent again.
      if (this.client && this.judgeAt![j]! < 0 && this.waitTicks[j] === Number.POSITIVE_INFINITY)
        continue;
      if (this.confirmedAt[j]! < 0 && this.attempts[j]! < this.maxAttempts) return true;
    }
    return false;
  }
}
