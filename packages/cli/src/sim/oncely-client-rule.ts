import {
  decide,
  INITIAL_RETRY_STATE,
  type Decision,
  type Observation,
  type RetryState,
  resolveRetryPolicy,
  type RetryPolicyOptions,
  RetryTokenBucket,
} from 'oncely/policy';
import { seededRandom, type Random } from 'oncely/policy';
import type { WorldParams } from './world-params.js';

/** The status the real client reports a timed-out attempt as (Request Timeout). */
export const SYNTHETIC_TIMEOUT_STATUS = 408;

/**
 * The per-job streams of the "oncely client + key" rule, beside the matched draws: seeded by
 * (seed, 0xffffffff, ONCELY_STREAM_BASE + job). No job is numbered 0xffffffff, so they never meet
 * a (seed, job, attempt) stream, and the base keeps them clear of the other rules' streams (1, 2).
 */
export const ONCELY_STREAM_BASE = 16;

/** The jitter stream of one job under "oncely client + key": a test replays it to check waits. */
export function oncelyJobRandom(seed: number, job: number): Random {
  return seededRandom(seed, 0xffff_ffff, ONCELY_STREAM_BASE + job);
}

/**
 * oncely's retry policy in ticks for a world: the world's retry-after is both the attempt timeout
 * and the backoff base, its maxRetryAfterTicks the cap, full jitter (the client's default), its
 * attempt cap (none: effectively unbounded), and the horizon as the deadline (no send after it).
 */
export function oncelyPolicyFor(p: WorldParams): RetryPolicyOptions {
  return resolveRetryPolicy({
    maxAttempts: p.maxAttempts ?? Number.MAX_SAFE_INTEGER,
    baseDelayMs: p.retryAfterTicks,
    maxDelayMs: p.maxRetryAfterTicks,
    jitter: 'full',
    deadlineAt: p.horizonTicks,
  });
}

/** What an attempt whose receipt did not come back within the timeout looks like to the policy. */
export const NO_RECEIPT: Observation = {
  kind: 'unknown',
  status: SYNTHETIC_TIMEOUT_STATUS,
  detail: 'no receipt within retry-after',
};

/**
 * The client side of "oncely client + key": one RetryState and one jitter stream per job, one
 * token bucket holding the world's credits (every send takes a keyed send's cost; the simulator write-up (docs/origins.md) never
 * refunds credits, so confirmations refund nothing), and decide() called at each attempt's
 * timeout. The engine asks it when a job may be sent again.
 */
export class OncelyClientRule {
  readonly policy: RetryPolicyOptions;
  readonly bucket: RetryTokenBucket;
  readonly #seed: number;
  readonly #states: RetryState[];
  readonly #randoms: (Random | undefined)[];

  constructor(p: WorldParams, sendCost: number) {
    this.policy = oncelyPolicyFor(p);
    this.bucket = new RetryTokenBucket({
      capacity: p.credits,
      retryCost: sendCost,
      timeoutRetryCost: sendCost,
      noRetryIncrement: 0,
    });
    this.#seed = p.seed;
    this.#states = new Array<RetryState>(p.jobs).fill(INITIAL_RETRY_STATE);
    this.#randoms = new Array<Random | undefined>(p.jobs).fill(undefined);
  }

  /**
   * Judges `job`'s last attempt at `tick`, its timeout, with no receipt in hand: the decision
   * says how many ticks to wait before the retry, or why the job is given up.
   */
  judgeTimeout(job: number, tick: number): Decision {
    const random = (this.#randoms[job] ??= oncelyJobRandom(this.#seed, job));
    const [decision, next] = decide(this.#states[job]!, NO_RECEIPT, tick, random, this.policy, {
      retryTokens: this.bucket,
    });
    this.#states[job] = next;
    return decision;
  }
}
