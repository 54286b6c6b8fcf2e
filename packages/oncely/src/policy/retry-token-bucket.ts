import { InvalidOptionError } from '../contract/errors.js';
import type { RetryBudget } from './retry-budget.js';

export interface RetryTokenBucketOptions {
  /** @default 500 */
  readonly capacity?: number;
  /** Tokens a retry takes. @default 5 */
  readonly retryCost?: number;
  /** Tokens a retry after a timeout or transport error takes. @default 10 */
  readonly timeoutRetryCost?: number;
  /** Tokens a success without any retry adds back. @default 1 */
  readonly noRetryIncrement?: number;
}

/** The AWS SDK "standard" retry mode's quota (capacity 500, retry 5, timeout retry 10, refund 1). */
export const DEFAULT_RETRY_TOKEN_BUCKET = {
  capacity: 500,
  retryCost: 5,
  timeoutRetryCost: 10,
  noRetryIncrement: 1,
} as const satisfies Required<RetryTokenBucketOptions>;

/** The bucket's options with defaults filled in, each checked (InvalidOptionError names it). */
export function resolveRetryTokenBucketOptions(
  options: RetryTokenBucketOptions,
): Required<RetryTokenBucketOptions> {
  // An option given as undefined means "the default", as everywhere else.
  const pick = (name: keyof RetryTokenBucketOptions): number => {
    const v = options[name] ?? DEFAULT_RETRY_TOKEN_BUCKET[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new InvalidOptionError(`retryBudget.${name}`, v, 'a finite number >= 0');
    }
    return v;
  };
  return {
    capacity: pick('capacity'),
    retryCost: pick('retryCost'),
    timeoutRetryCost: pick('timeoutRetryCost'),
    noRetryIncrement: pick('noRetryIncrement'),
  };
}

/**
 * A retry budget shared by every call of a client. Retries spend tokens, successes earn them
 * back, so when a dependency is down the whole process stops retrying instead of multiplying
 * the load (a retry storm) while first attempts still go through.
 */
export class RetryTokenBucket implements RetryBudget {
  readonly capacity: number;
  readonly retryCost: number;
  readonly timeoutRetryCost: number;
  readonly noRetryIncrement: number;
  #balance: number;

  constructor(options: RetryTokenBucketOptions = {}) {
    const resolved = resolveRetryTokenBucketOptions(options);
    this.capacity = resolved.capacity;
    this.retryCost = resolved.retryCost;
    this.timeoutRetryCost = resolved.timeoutRetryCost;
    this.noRetryIncrement = resolved.noRetryIncrement;
    this.#balance = this.capacity;
  }

  /** Tokens left. */
  get balance(): number {
    return this.#balance;
  }

  /** What a retry costs: more after a timeout, which suggests an overloaded peer. */
  costOf(afterTimeout: boolean): number {
    return afterTimeout ? this.timeoutRetryCost : this.retryCost;
  }

  /** Takes `cost` tokens for a retry; false (and nothing taken) when the bucket cannot cover it. */
  tryAcquire(cost: number): boolean {
    if (cost > this.#balance) return false;
    this.#balance -= cost;
    return true;
  }

  /**
   * Called once when a call succeeds: refunds the cost of the retry that succeeded
   * (`lastRetryCost`), or adds the no-retry increment when the first attempt did. Never beyond
   * capacity. This is the AWS SDK's rule: a long failing streak is paid for, only its end is repaid.
   */
  recordSuccess(lastRetryCost: number): void {
    const refund = lastRetryCost > 0 ? lastRetryCost : this.noRetryIncrement;
    this.#balance = Math.min(this.capacity, this.#balance + refund);
  }
}
