import { InvalidOptionError } from '../../src/contract/errors.js';
import { backoffDelayMs, type BackoffOptions } from '../../src/policy/index.js';
import { seededRandom } from '../../src/time/random.js';
import { MatchedDraws } from './matched-draws.js';
import { MessageQueue } from './message-queue.js';
import { OncelyClientRule } from './oncely-client-rule.js';
import { RoundTripEstimator } from './round-trip-estimator.js';
import { RULE_IDS, ruleById, type Rule, type RuleId } from './rules.js';
import type { TraceEvent, TraceKind } from './trace.js';
import { resolveWorldParams, type WorldParams } from './world-params.js';

/**
 * What an outcome is measured by, in a stable order (JSON, CSV and tables follow it):
 * - delivered: jobs with at least one effect;
 * - duplicates: effects beyond the first, summed over jobs;
 * - confirmed: jobs whose sender got a receipt before the run ended;
 * - sends, creditsSpent;
 * - unresolved: jobs never confirmed: the sender cannot tell whether they happened.
 */
export const METRIC_NAMES = [
  'delivered',
  'duplicates',
  'confirmed',
  'sends',
  'creditsSpent',
  'unresolved',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** Column titles of the metrics, in METRIC_NAMES order: the CLI's tables and the page's show the same words. */
export const METRIC_TITLES: { readonly [name in MetricName]: string } = {
  delivered: 'Delivered',
  duplicates: 'Duplicates',
  confirmed: 'Confirmed',
  sends: 'Sends',
  creditsSpent: 'Credits spent',
  unresolved: 'Unresolved',
};
export type WorldMetrics = { readonly [name in MetricName]: number };

export interface WorldOutcome {
  readonly rule: RuleId;
  readonly seed: number;
  readonly metrics: WorldMetrics;
  /** Every event, in order; present when the trace was asked for. */
  readonly trace?: readonly TraceEvent[];
}

export interface RunWorldOptions {
  /** Record the event trace. The batch turns it off: a world is then allocation-light. @default true */
  readonly trace?: boolean;
  /** Draws shared by every rule run on this world (made on demand otherwise). */
  readonly draws?: MatchedDraws;
}

/**
 * Streams beside the matched draws, seeded by (seed, STREAM_JOB, purpose). No job has the number
 * 0xffffffff, so these never collide with a (seed, job, attempt) stream.
 */
const STREAM_JOB = 0xffff_ffff;
const RANDOM_CHOICE_STREAM = 1;
const BACKOFF_JITTER_STREAM = 2;

/** Simulates one world under one rule. Validates `params` (InvalidOptionError names the bad one). */
export function runWorld(
  params: Partial<WorldParams>,
  rule: Rule | RuleId,
  options: RunWorldOptions = {},
): WorldOutcome {
  const resolved = resolveWorldParams(params);
  const found = typeof rule === 'string' ? ruleById(rule) : rule;
  if (!found) throw new InvalidOptionError('rule', rule, `one of ${RULE_IDS.join(', ')}`);
  const draws = options.draws ?? drawsFor(resolved);
  if (
    !draws.matches(
      resolved.seed,
      resolved.jobs,
      resolved.requestLoss,
      resolved.receiptLoss,
      resolved.maxDelayTicks,
    )
  ) {
    throw new InvalidOptionError(
      'draws',
      'MatchedDraws',
      'draws made for the same seed, jobs, losses and maxDelayTicks',
    );
  }
  return simulateWorld(resolved, found, draws, options.trace ?? true);
}

/** The matched draws for a world; share one between the rules run on it. */
export function drawsFor(params: WorldParams): MatchedDraws {
  return new MatchedDraws(
    params.seed,
    params.jobs,
    params.requestLoss,
    params.receiptLoss,
    params.maxDelayTicks,
  );
}

/**
 * The engine, for already-validated params. Each tick, in this order (docs/simulator.md):
 * forget keys if due, request arrivals (effects), receipt arrivals (confirmations), dispatch.
 */
export function simulateWorld(
  p: WorldParams,
  rule: Rule,
  draws: MatchedDraws,
  record: boolean,
): WorldOutcome {
  const jobs = p.jobs;
  const { keyed, choice, timeout } = rule;
  const maxAttempts = p.maxAttempts ?? Number.POSITIVE_INFINITY;
  const retentionTicks = p.retentionTicks ?? Number.POSITIVE_INFINITY;
  const forgetKeysAt = p.forgetKeysAt ?? -1;
  const { horizonTicks, sendsPerTick, retryAfterTicks } = p;
  const cost = keyed ? p.keyedSendCost : p.sendCost;
  // Every message sent by the last dispatch tick arrives within two legs of maxDelayTicks.
  const endTick = horizonTicks + 2 * p.maxDelayTicks;

  // Per-job state in plain small-integer arrays: a world is short-lived, and typed arrays cost
  // more to allocate than these few slots are worth.
  const attempts: number[] = new Array<number>(jobs).fill(0);
  const lastSendAt: number[] = new Array<number>(jobs).fill(0);
  const waitTicks: number[] = new Array<number>(jobs).fill(retryAfterTicks);
  const confirmedAt: number[] = new Array<number>(jobs).fill(-1);
  const effects: number[] = new Array<number>(jobs).fill(0);
  const keyStoredAt: number[] = new Array<number>(jobs).fill(-1);

  // Messages in flight, listed per arrival tick. A message arrives 1 … maxDelayTicks after it
  // leaves, so a ring of maxDelayTicks + 1 slots holds everything: slots 0 … ringSize − 1 for
  // requests, the next ringSize for receipts. Each list keeps send order, which is the order
  // same-tick arrivals are handled in.
  const ringSize = p.maxDelayTicks + 1;
  const queue = new MessageQueue(2 * ringSize);
  const requests = 0;
  const receipts = ringSize;
  let inFlight = 0;

  const choiceRandom =
    choice === 'random' ? seededRandom(p.seed, STREAM_JOB, RANDOM_CHOICE_STREAM) : undefined;
  const jitterRandom =
    timeout === 'backoff' ? seededRandom(p.seed, STREAM_JOB, BACKOFF_JITTER_STREAM) : undefined;
  const backoff: BackoffOptions = {
    baseDelayMs: p.retryAfterTicks,
    maxDelayMs: p.maxRetryAfterTicks,
    jitter: 'full',
  };
  const estimator =
    timeout === 'learned'
      ? new RoundTripEstimator(p.retryAfterTicks, p.maxRetryAfterTicks)
      : undefined;
  // oncely's client: a job is judged by decide() at its attempt's timeout; until then (and for
  // good, once the policy stops it) it is not eligible. The bucket holds the credits.
  const client = timeout === 'policy' ? new OncelyClientRule(p, cost) : undefined;
  const judgeAt: number[] | undefined = client ? new Array<number>(jobs).fill(-1) : undefined;

  const trace: TraceEvent[] | undefined = record ? [] : undefined;
  const emit = (tick: number, kind: TraceKind, job: number, attempt: number): void => {
    trace?.push({ tick, kind, job, attempt });
  };

  let credits = p.credits;
  let sends = 0;
  let nextFresh = 0;

  /** Unconfirmed, under the attempt cap, and waited long enough since its last send. */
  const eligible = (job: number, tick: number, wait: number): boolean =>
    confirmedAt[job]! < 0 &&
    attempts[job]! < maxAttempts &&
    tick - lastSendAt[job]! >= (wait < 0 ? waitTicks[job]! : wait);

  // After a scan that finds no eligible job, none can become eligible before this tick: sends
  // and confirmations only push eligibility later. A new learned timeout may bring it closer,
  // so observing a round trip resets it. A pure speed-up: the same jobs are picked without it.
  let noneEligibleBefore = 0;

  /** The job to send now, or -1: fresh jobs first, then a retry chosen by the rule. */
  const pick = (tick: number): number => {
    if (nextFresh < jobs) return nextFresh++;
    if (choice === 'none' || tick < noneEligibleBefore) return -1;
    // One wait for every job, or -1 for each job's own (backoff draws one per send).
    const wait =
      timeout === 'fixed' ? retryAfterTicks : timeout === 'learned' ? estimator!.timeoutTicks : -1;
    let count = 0;
    let soonest = Number.POSITIVE_INFINITY;
    for (let j = 0; j < jobs; j++) {
      if (eligible(j, tick, wait)) {
        // The oldest job is the lowest-numbered: jobs are created in number order at tick 0.
        if (choice === 'oldest') return j;
        count++;
      } else if (confirmedAt[j]! < 0 && attempts[j]! < maxAttempts) {
        soonest = Math.min(soonest, lastSendAt[j]! + (wait < 0 ? waitTicks[j]! : wait));
      }
    }
    if (count === 0) {
      noneEligibleBefore = soonest;
      return -1;
    }
    let chosen = Math.floor(choiceRandom!.next() * count);
    for (let j = 0; j < jobs; j++) if (eligible(j, tick, wait) && chosen-- === 0) return j;
    return -1;
  };

  const send = (job: number, tick: number): void => {
    const attempt = ++attempts[job]!;
    lastSendAt[job] = tick;
    credits -= cost;
    if (client) {
      client.bucket.tryAcquire(cost);
      waitTicks[job] = Number.POSITIVE_INFINITY;
      judgeAt![job] = tick + retryAfterTicks;
    }
    sends++;
    if (jitterRandom) waitTicks[job] = Math.max(1, backoffDelayMs(attempt, backoff, jitterRandom));
    emit(tick, 'send', job, attempt);
    if (draws.requestLost(job, attempt)) {
      emit(tick, 'request-lost', job, attempt);
      return;
    }
    queue.push(
      requests + ((tick + draws.forwardDelayTicks(job, attempt)) % ringSize),
      job,
      attempt,
    );
    inFlight++;
  };

  /** True while some job could still be sent: the run may end early once this is false and nothing is in flight. */
  const mayStillSend = (tick: number): boolean => {
    if (tick + 1 >= horizonTicks || credits < cost) return false;
    if (nextFresh < jobs) return true;
    if (choice === 'none') return false;
    for (let j = 0; j < jobs; j++) {
      // A job the policy gave up on (judged, and still never eligible) will not be sent again.
      if (client && judgeAt![j]! < 0 && waitTicks[j] === Number.POSITIVE_INFINITY) continue;
      if (confirmedAt[j]! < 0 && attempts[j]! < maxAttempts) return true;
    }
    return false;
  };

  for (let tick = 0; tick < endTick; tick++) {
    if (tick === forgetKeysAt) keyStoredAt.fill(-1);

    const slot = tick % ringSize;
    for (let m = queue.take(requests + slot); m >= 0; m = queue.next(m)) {
      const job = queue.job(m);
      const attempt = queue.attempt(m);
      inFlight--;
      const storedAt = keyStoredAt[job]!;
      if (keyed && storedAt >= 0 && tick - storedAt < retentionTicks) {
        // Suppressing a repeat does not refresh the key (docs/origins.md, "The retry-rule simulator").
        emit(tick, 'suppressed', job, attempt);
      } else {
        effects[job]!++;
        // Stored atomically with the effect; after expiry or a reset the key is stored anew.
        if (keyed) keyStoredAt[job] = tick;
        emit(tick, 'effect', job, attempt);
      }
      emit(tick, 'receipt-sent', job, attempt);
      if (draws.receiptLost(job, attempt)) {
        emit(tick, 'receipt-lost', job, attempt);
      } else {
        queue.push(
          receipts + ((tick + draws.returnDelayTicks(job, attempt)) % ringSize),
          job,
          attempt,
        );
        inFlight++;
      }
    }

    for (let m = queue.take(receipts + slot); m >= 0; m = queue.next(m)) {
      const job = queue.job(m);
      const attempt = queue.attempt(m);
      inFlight--;
      emit(tick, 'confirmed', job, attempt);
      if (confirmedAt[job]! >= 0) continue;
      confirmedAt[job] = tick;
      // Karn's rule: after a retry, a receipt does not say which send it answers.
      if (estimator && attempts[job] === 1) {
        estimator.observe(tick - lastSendAt[job]!);
        noneEligibleBefore = 0;
      }
    }

    if (client) {
      // Timeouts fire after this tick's receipts (a receipt on the timeout tick is in time), in
      // job order, so the shared bucket is read in one deterministic order.
      for (let j = 0; j < jobs; j++) {
        if (judgeAt![j] !== tick) continue;
        judgeAt![j] = -1;
        if (confirmedAt[j]! >= 0) continue;
        const decision = client.judgeTimeout(j, tick);
        if (decision.action === 'retry') {
          waitTicks[j] = retryAfterTicks + decision.delayMs;
          noneEligibleBefore = 0;
        }
      }
    }
    if (tick < horizonTicks) {
      for (let s = 0; s < sendsPerTick && credits >= cost; s++) {
        const job = pick(tick);
        if (job < 0) break;
        send(job, tick);
      }
    }
    // Nothing in flight and nothing left to send: the remaining ticks would record nothing.
    if (inFlight === 0 && !mayStillSend(tick)) break;
  }

  let delivered = 0;
  let duplicates = 0;
  let confirmed = 0;
  for (let j = 0; j < jobs; j++) {
    if (effects[j]! > 0) delivered++;
    if (effects[j]! > 1) duplicates += effects[j]! - 1;
    if (confirmedAt[j]! >= 0) confirmed++;
  }
  const metrics: WorldMetrics = {
    delivered,
    duplicates,
    confirmed,
    sends,
    creditsSpent: p.credits - credits,
    unresolved: jobs - confirmed,
  };
  return trace
    ? { rule: rule.id, seed: p.seed, metrics, trace }
    : { rule: rule.id, seed: p.seed, metrics };
}
