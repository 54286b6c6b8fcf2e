import { validateKey } from '../contract/idempotency-key.js';
import { InvalidOptionError } from '../contract/errors.js';
import type { Observation } from '../policy/decide.js';
import {
  resolveRetryPolicy,
  type RetryPolicyInput,
  type RetryPolicyOptions,
} from '../policy/retry-options.js';
import type { RetryTokens } from '../policy/decide-inputs.js';
import type { RetryBudget } from '../policy/retry-budget.js';
import { systemClock, type Clock } from '../time/clock.js';
import { systemRandom, type Random } from '../time/random.js';
import type { AttemptContext } from './attempt-context.js';
import { defaultClassifyError, defaultObserve } from './default-observe.js';
import type { AttemptRecord } from './retry-report.js';

export interface RetryOptions<T> extends RetryPolicyInput {
  /** The intent's idempotency key, validated once and passed to every attempt. */
  readonly key?: string | undefined;
  /** @default the system clock */
  readonly clock?: Clock;
  /** @default systemRandom */
  readonly random?: Random;
  /** Aborting stops the loop, cancelling a pending sleep. */
  readonly signal?: AbortSignal | undefined;
  /**
   * A retry budget shared across calls (a RetryTokenBucket), or across processes (a shared budget
   * on SQLite or PostgreSQL); when drained, retries are refused.
   */
  readonly retryBudget?: RetryBudget | undefined;
  /**
   * False when a retry would be unsafe (a POST without a key): the first attempt still runs, and
   * a retryable answer stops with `unsafe_to_retry`. @default true
   */
  readonly mayRetry?: boolean;
  /**
   * Reads a returned value. @default values with a numeric `status` are responses (with
   * `retryAfter`/`date` read from a `headers.get`), anything else is a success.
   */
  readonly observe?: (value: T) => Observation;
  /** Reads a thrown error. @default transport failures and timeouts are unknown, the rest fail. */
  readonly classifyError?: (error: unknown) => Observation;
  /** Called after each attempt is decided: for progress output. */
  readonly onAttempt?: (record: AttemptRecord) => void;
  /**
   * Whether every attempt is timed: its start and end are in its record and in the report. False
   * reads the clock only where the policy needs it, as cockatiel times a call only when a listener
   * asks: a first attempt is not timed unless a deadline is set, and its end is read only if it did
   * not simply succeed (the next decision needs the time). What was not measured is NaN in the
   * report. Two clock reads are about a third of a first success's cost on a busy loop; next to a
   * network call they are nothing. @default true
   */
  readonly timings?: boolean;
}

/** What may differ between two intents run by one prepared retry: the key, the signal, the safety. */
export interface RetryCall {
  /** The intent's idempotency key, validated here and passed to every attempt. */
  readonly key?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly mayRetry?: boolean | undefined;
  readonly onAttempt?: ((record: AttemptRecord) => void) | undefined;
}

/** Everything `retry` needs, resolved and validated once: the policy and its collaborators. */
export interface PreparedRetry<T> {
  readonly policy: RetryPolicyOptions;
  readonly key: string | undefined;
  readonly mayRetry: boolean;
  readonly clock: Clock;
  readonly random: Random;
  readonly signal: AbortSignal | undefined;
  readonly retryBudget: RetryBudget | undefined;
  readonly observe: (value: T) => Observation;
  readonly classifyError: (error: unknown) => Observation;
  readonly onAttempt: ((record: AttemptRecord) => void) | undefined;
  /** Whether the first attempt is timed: `timings`, or a deadline (the policy then needs its start). */
  readonly timesFirstAttempt: boolean;
  /**
   * The first attempt's context for the key and signal prepared here, made once and frozen. A call
   * whose key or signal differs (see withCall) gets a fresh one: see firstAttemptContext.
   */
  readonly firstContext: AttemptContext;
  /** What decide() is told besides the observation; `aborted` is refreshed from the signal. */
  readonly inputs: {
    aborted: boolean;
    readonly mayRetry: boolean;
    readonly retryTokens: RetryTokens | undefined;
  };
}

/** Resolves and validates `options` once (InvalidOptionError names the bad option). */
export function prepareRetry<T>(options: RetryOptions<T> = {}): PreparedRetry<T> {
  if (options.mayRetry !== undefined && typeof options.mayRetry !== 'boolean') {
    throw new InvalidOptionError('mayRetry', options.mayRetry, 'a boolean');
  }
  if (options.timings !== undefined && typeof options.timings !== 'boolean') {
    throw new InvalidOptionError('timings', options.timings, 'a boolean');
  }
  const mayRetry = options.mayRetry ?? true;
  const key = options.key === undefined ? undefined : validateKey(options.key);
  const policy = resolveRetryPolicy(options);
  return {
    policy,
    timesFirstAttempt: options.timings !== false || Number.isFinite(policy.deadlineAt),
    key,
    firstContext: Object.freeze({ attempt: 1, key, signal: options.signal }),
    mayRetry,
    inputs: { aborted: false, mayRetry, retryTokens: tokensForStep(options.retryBudget) },
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    signal: options.signal,
    retryBudget: options.retryBudget,
    observe: options.observe ?? (defaultObserve as (value: T) => Observation),
    classifyError: options.classifyError ?? defaultClassifyError,
    onAttempt: options.onAttempt,
  };
}

/** `prepared` with one intent's key, signal, safety and progress callback on top. */
export function withCall<T>(prepared: PreparedRetry<T>, call: RetryCall): PreparedRetry<T> {
  if (call.mayRetry !== undefined && typeof call.mayRetry !== 'boolean') {
    throw new InvalidOptionError('mayRetry', call.mayRetry, 'a boolean');
  }
  const mayRetry = call.mayRetry ?? prepared.mayRetry;
  return {
    ...prepared,
    key: call.key === undefined ? prepared.key : validateKey(call.key),
    signal: call.signal ?? prepared.signal,
    mayRetry,
    inputs: { aborted: false, mayRetry, retryTokens: prepared.inputs.retryTokens },
    onAttempt: call.onAttempt ?? prepared.onAttempt,
  };
}

/**
 * What the policy step reads of the budget. A shared budget's balance is only the last one seen:
 * other processes spend and refund meanwhile, so the step must not refuse on it; it is told there
 * is room, and the loop's `tryAcquire` (one round trip) decides.
 */
function tokensForStep(budget: RetryBudget | undefined): RetryTokens | undefined {
  if (budget === undefined || budget.balanceIsEstimate !== true) return budget;
  return {
    balance: Number.POSITIVE_INFINITY,
    costOf: (afterTimeout) => budget.costOf(afterTimeout),
  };
}
