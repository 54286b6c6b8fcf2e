import { InvalidOptionError } from '../../contract/errors.js';
import type { RetryBudget } from '../../policy/retry-budget.js';
import {
  resolveRetryTokenBucketOptions,
  type RetryTokenBucketOptions,
} from '../../policy/retry-token-bucket.js';
import { systemClock, type Clock } from '../../time/clock.js';
import { checkIdentifier } from '../ledger/ledger-row.js';

/** The options a shared budget takes on either database, besides its connection. */
export interface SharedRetryBudgetOptions extends RetryTokenBucketOptions {
  /** The budget's row: every process using this name spends from one balance. @default 'default' */
  readonly name?: string;
  /** @default 'oncely_retry_budgets' */
  readonly table?: string;
  /**
   * How long a retry waits for the database's answer; past it the retry is refused (fail
   * closed). @default 1000
   */
  readonly acquireTimeoutMs?: number;
  /**
   * Refunds are written once this many tokens are owed (and by flush() and close()), not one
   * UPDATE per success: a process holds back fewer than this many tokens, so the fleet can only
   * underspend. 0 writes every refund at once. @default 10
   */
  readonly refundBatch?: number;
  /** Times acquireTimeoutMs out (background sleeps). @default the system clock */
  readonly clock?: Clock;
  /** Told of every database error; the budget itself never throws into a retry loop. */
  readonly onError?: (error: unknown) => void;
}

export const DEFAULT_SHARED_RETRY_BUDGET = {
  name: 'default',
  table: 'oncely_retry_budgets',
  acquireTimeoutMs: 1000,
  refundBatch: 10,
} as const;

/** One database's three statements on the budget's row; each one atomic by itself. */
export interface RetryBudgetRow {
  /** Makes the table and the row (full) when missing; sets its capacity. The balance. */
  setup(capacity: number): Promise<number>;
  /** Takes `cost` if the balance covers it (UPDATE … WHERE balance >= cost); the balance seen. */
  take(cost: number): Promise<{ readonly taken: boolean; readonly balance: number }>;
  /** Adds `tokens`, never past the row's capacity. The balance. */
  give(tokens: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * A retry budget held in one database row, so a fleet of processes spends one balance: when a
 * dependency is down everywhere, the fleet stops retrying after `capacity / retryCost` retries
 * in all, not that many per process. Acquiring is a round trip, made only for a retry (the first
 * attempt costs nothing); a database error or a timeout refuses the retry (fail closed: a
 * budget that cannot be read is treated as drained, so an outage of the database never adds
 * load to a failing dependency), reports the error to `onError` and counts it in `errors`.
 */
export class SharedRetryBudget implements RetryBudget {
  readonly balanceIsEstimate = true;
  readonly name: string;
  readonly capacity: number;
  readonly retryCost: number;
  readonly timeoutRetryCost: number;
  readonly noRetryIncrement: number;
  readonly #row: RetryBudgetRow;
  readonly #acquireTimeoutMs: number;
  readonly #refundBatch: number;
  readonly #clock: Clock;
  readonly #onError: ((error: unknown) => void) | undefined;
  #balance: number;
  #owed = 0;
  #errors = 0;
  #ready: Promise<void> | undefined;
  #writes = new Set<Promise<void>>();

  constructor(row: RetryBudgetRow, options: ResolvedSharedRetryBudgetOptions) {
    this.#row = row;
    this.name = options.name;
    this.capacity = options.capacity;
    this.retryCost = options.retryCost;
    this.timeoutRetryCost = options.timeoutRetryCost;
    this.noRetryIncrement = options.noRetryIncrement;
    this.#acquireTimeoutMs = options.acquireTimeoutMs;
    this.#refundBatch = options.refundBatch;
    this.#clock = options.clock;
    this.#onError = options.onError;
    this.#balance = options.capacity;
  }

  /** The balance this process last saw; others spend and refund meanwhile. */
  get balance(): number {
    return this.#balance;
  }

  /** Database errors and timeouts met so far (each one refused a retry or delayed a refund). */
  get errors(): number {
    return this.#errors;
  }

  costOf(afterTimeout: boolean): number {
    return afterTimeout ? this.timeoutRetryCost : this.retryCost;
  }

  /** Makes the table and the row if missing. Rejects on a database error: call it at start-up. */
  ready(): Promise<void> {
    this.#ready ??= this.#row.setup(this.capacity).then(
      (balance) => void (this.#balance = balance),
      (error: unknown) => {
        this.#ready = undefined; // the next call tries again
        throw error;
      },
    );
    return this.#ready;
  }

  /** One round trip: true if `cost` tokens were taken. Never rejects; an error refuses. */
  async tryAcquire(cost: number): Promise<boolean> {
    const abort = new AbortController();
    const take = (async () => {
      await this.ready();
      const { taken, balance } = await this.#row.take(cost);
      this.#balance = balance;
      return taken;
    })();
    const timeout = this.#sleep(this.#acquireTimeoutMs, abort.signal).then(
      () =>
        Promise.reject(
          new Error(`no answer from the retry budget in ${this.#acquireTimeoutMs} ms`),
        ),
      () => false, // cancelled: the take answered first
    );
    try {
      return await Promise.race([take, timeout]);
    } catch (error) {
      // A take that answers after its timeout spends tokens for no retry: the fleet underspends.
      take.catch(() => undefined);
      this.#failed(error);
      return false;
    } finally {
      abort.abort();
    }
  }

  /** Owes the refund and writes what is owed once it reaches refundBatch; never blocks the call. */
  recordSuccess(lastRetryCost: number): void {
    this.#owed += lastRetryCost > 0 ? lastRetryCost : this.noRetryIncrement;
    if (this.#owed > 0 && this.#owed >= this.#refundBatch) this.#write();
  }

  /** Writes the refunds owed now and waits for every write under way. Never rejects. */
  async flush(): Promise<void> {
    if (this.#owed > 0) this.#write();
    await Promise.all(this.#writes);
  }

  /** Flushes, then closes the connection if the budget opened it. */
  async close(): Promise<void> {
    await this.flush();
    await this.#row.close();
  }

  #write(): void {
    const tokens = Math.min(this.#owed, this.capacity);
    this.#owed = 0;
    const write = (async () => {
      await this.ready();
      this.#balance = await this.#row.give(tokens);
    })().catch((error: unknown) => {
      // Kept for the next write: a refund is delayed by an error, never lost or doubled.
      this.#owed = Math.min(this.capacity, this.#owed + tokens);
      this.#failed(error);
    });
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    const clock = this.#clock;
    return clock.sleepInBackground ? clock.sleepInBackground(ms, signal) : clock.sleep(ms, signal);
  }

  #failed(error: unknown): void {
    this.#errors++;
    try {
      this.#onError?.(error);
    } catch {
      // A throwing listener must not turn a refusal into an exception in the caller's loop.
    }
  }
}

export interface ResolvedSharedRetryBudgetOptions extends Required<RetryTokenBucketOptions> {
  readonly name: string;
  readonly table: string;
  readonly acquireTimeoutMs: number;
  readonly refundBatch: number;
  readonly clock: Clock;
  readonly onError: ((error: unknown) => void) | undefined;
}

/** Checks every option once, at the edge (InvalidOptionError names the bad one). */
export function resolveSharedRetryBudgetOptions(
  options: SharedRetryBudgetOptions,
): ResolvedSharedRetryBudgetOptions {
  const d = DEFAULT_SHARED_RETRY_BUDGET;
  const name = options.name ?? d.name;
  if (typeof name !== 'string' || name.length === 0 || name.length > 200)
    throw new InvalidOptionError('retryBudget.name', name, 'a string of 1 to 200 characters');
  const acquireTimeoutMs = options.acquireTimeoutMs ?? d.acquireTimeoutMs;
  if (
    typeof acquireTimeoutMs !== 'number' ||
    !(acquireTimeoutMs > 0) ||
    !Number.isFinite(acquireTimeoutMs)
  )
    throw new InvalidOptionError(
      'retryBudget.acquireTimeoutMs',
      acquireTimeoutMs,
      'a finite number of milliseconds > 0',
    );
  const refundBatch = options.refundBatch ?? d.refundBatch;
  if (typeof refundBatch !== 'number' || !(refundBatch >= 0) || !Number.isFinite(refundBatch))
    throw new InvalidOptionError('retryBudget.refundBatch', refundBatch, 'a finite number >= 0');
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new InvalidOptionError('retryBudget.onError', options.onError, 'a function');
  return {
    ...resolveRetryTokenBucketOptions(options),
    name,
    table: checkIdentifier('retryBudget.table', options.table ?? d.table),
    acquireTimeoutMs,
    refundBatch,
    clock: options.clock ?? systemClock,
    onError: options.onError,
  };
}
