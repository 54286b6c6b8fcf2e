import {
  decide,
  INITIAL_RETRY_STATE,
  type Observation,
  type RetryState,
  DEFAULT_RETRY_POLICY,
  type RetryPolicyOptions,
  RetryTokenBucket,
} from 'oncely/policy';
import { SYNTHETIC_TIMEOUT_STATUS } from '../oncely-client-rule.js';
import { seededRandom, type Random } from 'oncely/policy';

/**
 * The client strategies of the failing-dependency and overload models, after Brooker, "Fixing
 * retries with token buckets and circuit breakers" (2022), plus oncely's own client.
 */
export const FLEET_STRATEGIES = ['none', 'retries', 'bucket', 'breaker', 'oncely'] as const;
export type FleetStrategy = (typeof FLEET_STRATEGIES)[number];
/**
 * The retry-budget model's two: oncely's client with a bucket in every process (as the AWS SDK,
 * Polly, resilience4j and tower have), and with one bucket shared by the fleet (a database row).
 */
export const BUDGET_STRATEGIES = ['oncely', 'oncely-shared'] as const;
export type BudgetStrategy = (typeof BUDGET_STRATEGIES)[number];

export const FLEET_LABELS: { readonly [s in FleetStrategy]: string } = {
  none: 'No retries',
  retries: '3 retries',
  bucket: 'Token bucket',
  breaker: 'Circuit breaker',
  oncely: 'oncely defaults',
};
export const BUDGET_LABELS: { readonly [s in BudgetStrategy]: string } = {
  oncely: 'Per process',
  'oncely-shared': 'Shared',
};

/** The constants of the 2022 post's strategies (docs/fleet.md). */
export const BROOKER_2022 = {
  /** Retries after the first try, for "3 retries", the bucket and the breaker. */
  maxRetries: 3,
  /** The retry token bucket starts at (and is capped at) this many tokens. */
  bucketStart: 5,
  /** Each first try adds this much. */
  bucketPerCall: 0.1,
  /** A retry needs more than this many tokens, and takes bucketCost. */
  bucketNeedsMoreThan: 1,
  bucketCost: 1,
  /** The breaker allows retries while the client's failed-attempt ratio is at most this. */
  breakerRatio: 0.1,
  /** ... measured over the client's last this many attempts. */
  breakerWindow: 100,
} as const;

/** One request in flight, as its client's strategy sees it. */
export interface RequestState {
  /** Attempts made, the current one included. */
  attempts: number;
  /** oncely's policy state (unused by the other strategies). */
  retry: RetryState;
  /** Tokens the last retry took from oncely's bucket, refunded on success. */
  lastRetryCost: number;
}

/**
 * One client's retry behaviour: told about each first try and each attempt's end, it says how long
 * to wait before the next attempt (0: at once) or -1 to give up.
 */
export interface ClientStrategy {
  firstTry(): void;
  /** The attempt failed (`timedOut`: no answer in time) at `nowMs`; the delay before a retry, or -1. */
  failed(request: RequestState, timedOut: boolean, nowMs: number): number;
  succeeded(request: RequestState): void;
}

/** oncely's client policy, unchanged: maxAttempts 3, full jitter from 100 ms, 10 s cap. */
export const ONCELY_FLEET_POLICY: RetryPolicyOptions = DEFAULT_RETRY_POLICY;
const FAILED: Observation = { kind: 'response', status: 503 };
const TIMED_OUT: Observation = {
  kind: 'unknown',
  status: SYNTHETIC_TIMEOUT_STATUS,
  detail: 'client timeout',
};

export function newRequest(): RequestState {
  return { attempts: 1, retry: INITIAL_RETRY_STATE, lastRetryCost: 0 };
}

/**
 * A fresh strategy for one client; `random` is the client's own stream (oncely's jitter). The
 * shared strategy spends from `shared`, one bucket for the whole fleet.
 */
export function clientStrategy(
  strategy: FleetStrategy | BudgetStrategy,
  random: Random,
  shared?: RetryTokenBucket,
): ClientStrategy {
  const b = BROOKER_2022;
  switch (strategy) {
    case 'none':
      return { firstTry() {}, failed: () => -1, succeeded() {} };
    case 'retries':
      return {
        firstTry() {},
        failed: (r) => (r.attempts <= b.maxRetries ? 0 : -1),
        succeeded() {},
      };
    case 'bucket': {
      let tokens: number = b.bucketStart;
      return {
        firstTry() {
          tokens = Math.min(b.bucketStart, tokens + b.bucketPerCall);
        },
        failed(r) {
          if (r.attempts > b.maxRetries || tokens <= b.bucketNeedsMoreThan) return -1;
          tokens -= b.bucketCost;
          return 0;
        },
        succeeded() {},
      };
    }
    case 'breaker': {
      // A ring of the last breakerWindow attempts' results (1 = failed).
      const window = new Uint8Array(b.breakerWindow);
      let seen = 0;
      let failedInWindow = 0;
      const record = (failed: boolean): void => {
        const slot = seen % b.breakerWindow;
        if (seen >= b.breakerWindow) failedInWindow -= window[slot]!;
        window[slot] = failed ? 1 : 0;
        failedInWindow += window[slot]!;
        seen++;
      };
      return {
        firstTry() {},
        failed(r) {
          record(true);
          const ratio = failedInWindow / Math.min(seen, b.breakerWindow);
          return r.attempts <= b.maxRetries && ratio <= b.breakerRatio ? 0 : -1;
        },
        succeeded() {
          record(false);
        },
      };
    }
    case 'oncely':
    case 'oncely-shared': {
      // The AWS standard-mode constants: capacity 500, retry 5, timeout retry 10, refund 1.
      const bucket = strategy === 'oncely' ? new RetryTokenBucket() : shared!;
      return {
        firstTry() {},
        failed(r, timedOut, nowMs) {
          const [decision, next] = decide(
            r.retry,
            timedOut ? TIMED_OUT : FAILED,
            nowMs,
            random,
            ONCELY_FLEET_POLICY,
            { retryTokens: bucket },
          );
          r.retry = next;
          if (decision.action === 'stop') return -1;
          bucket.tryAcquire(decision.retryCost);
          r.lastRetryCost = decision.retryCost;
          return decision.delayMs;
        },
        succeeded(r) {
          bucket.recordSuccess(r.lastRetryCost);
        },
      };
    }
  }
}

/**
 * One seeded run's draws: each client's own stream (and the strategy that uses it), and the
 * server's, so a run's clients never share randomness and adding a client changes no other's.
 */
export function seedFleet(
  seed: number,
  stream: number,
  clients: number,
  strategy: FleetStrategy | BudgetStrategy,
): { randoms: Random[]; server: Random; strategies: ClientStrategy[] } {
  const randoms = Array.from({ length: clients }, (_, c) => seededRandom(seed, stream, c));
  const server = seededRandom(seed, stream, 0xffff_ffff);
  // The simulator is one thread: a shared bucket is exact, as a database row's atomic UPDATE is.
  const shared = strategy === 'oncely-shared' ? new RetryTokenBucket() : undefined;
  return {
    randoms,
    server,
    strategies: randoms.map((random) => clientStrategy(strategy, random, shared)),
  };
}
