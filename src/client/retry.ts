import { SYNTHETIC_TIMEOUT_STATUS } from '../contract/status-class.js';
import { validateKey } from '../contract/idempotency-key.js';
import { InvalidOptionError } from '../contract/errors.js';
import { decide, INITIAL_RETRY_STATE, mayStartAttempt, type Observation, type StopReason } from '../policy/decide.js';
import { resolveRetryPolicy, type RetryPolicyOptions } from '../policy/retry-options.js';
import type { RetryTokenBucket } from '../policy/retry-token-bucket.js';
import { systemClock, type Clock } from '../time/clock.js';
import { systemRandom, type Random } from '../time/random.js';
import { isTransportError, describeError } from './transport-error.js';
import { RetryError, type AttemptRecord, type RetryReport } from './retry-report.js';

/** What each attempt is given. The key is the same on every attempt: that is the point. */
export interface AttemptContext {
  readonly attempt: number;
  readonly key: string | undefined;
  readonly signal: AbortSignal | undefined;
}

export interface RetryOptions<T> extends Partial<RetryPolicyOptions> {
  /** The intent's idempotency key, validated once and passed to every attempt. */
  readonly key?: string | undefined;
  /** @default the system clock */
  readonly clock?: Clock;
  /** @default Math.random */
  readonly random?: Random;
  /** Aborting stops the loop, cancelling a pending sleep. */
  readonly signal?: AbortSignal | undefined;
  /** A retry budget shared across calls; when drained, retries are refused. */
  readonly retryBudget?: RetryTokenBucket | undefined;
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
}

export interface RetryResult<T> {
  readonly value: T;
  readonly report: RetryReport;
}

/**
 * Runs `operation` until it succeeds or the policy stops it. Every attempt gets the same key;
 * sleeps go through the injected clock; the report lists every attempt with its delay and why.
 * Resolves with the value and the report on success; otherwise rejects with a {@link RetryError}
 * that carries the report.
 */
export async function retry<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  options: RetryOptions<T> = {},
): Promise<RetryResult<T>> {
  const policy = resolveRetryPolicy(options);
  const key = options.key === undefined ? undefined : validateKey(options.key);
  if (options.mayRetry !== undefined && typeof options.mayRetry !== 'boolean') {
    throw new InvalidOptionError('mayRetry', options.mayRetry, 'a boolean');
  }
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const observe = options.observe ?? defaultObserve;
  const classifyError = options.classifyError ?? defaultClassifyError;
  const { signal, retryBudget } = options;

  const startedAt = clock.now();
  const attempts: AttemptRecord[] = [];
  let state = INITIAL_RETRY_STATE;
  let totalSleptMs = 0;
  let lastRetryCost = 0;
  let lastValue: unknown;
  let lastError: unknown;

  const finish = (stopReason: StopReason, outcome: RetryReport['outcome']): RetryReport => ({
    key,
    outcome,
    stopReason,
    attempts,
    attemptCount: attempts.length,
    lastNon2xxStatus: [...attempts].reverse().find((a) => a.status !== undefined && (a.status < 200 || a.status > 299))?.status,
    totalSleptMs,
    startedAt,
    endedAt: clock.now(),
    retryBudgetBalance: retryBudget?.balance,
  });
  const giveUp = (stopReason: StopReason, outcome: RetryReport['outcome']): never => {
    throw new RetryError(finish(stopReason, outcome), lastValue, lastError);
  };
  const outcomeSoFar = (): RetryReport['outcome'] => (state.sawUnknown ? 'unknown' : 'fail');
  // Every attempt is recorded and shown to onAttempt exactly once, however the loop ends.
  const keep = (record: AttemptRecord): void => {
    attempts.push(record);
    options.onAttempt?.(record);
  };

  for (;;) {
    if (signal?.aborted) giveUp('aborted', attempts.length === 0 ? 'fail' : outcomeSoFar());
    if (!mayStartAttempt(clock.now(), policy)) giveUp('deadline_passed', outcomeSoFar());

    const attemptStartedAt = clock.now();
    let observation: Observation;
    let value: T | undefined;
    let abortedInFlight = false;
    try {
      value = await operation({ attempt: state.attempt + 1, key, signal });
      lastValue = value;
      observation = observe(value);
    } catch (error) {
      lastError = error;
      abortedInFlight = signal?.aborted === true;
      observation = abortedInFlight ? { kind: 'unknown', status: SYNTHETIC_TIMEOUT_STATUS, detail: 'aborted' } : classifyError(error);
    }
    const endedAt = clock.now();
    const [decision, nextState] = decide(state, observation, endedAt, random, policy);
    state = nextState;

    const record: AttemptRecord = {
      attempt: state.attempt,
      startedAt: attemptStartedAt,
      endedAt,
      outcome: decision.attemptOutcome,
      ...(observation.kind !== 'failure' ? { status: observation.status } : {}),
      ...(observation.kind !== 'response' ? { detail: observation.detail } : {}),
      ...(decision.retryAfter.kind !== 'absent' ? { retryAfter: decision.retryAfter } : {}),
      ...(decision.action === 'retry' ? { delayMs: decision.delayMs, delayReason: decision.delayReason } : {}),
    };

    if (decision.action === 'stop') {
      keep(record);
      if (decision.reason === 'ok') {
        retryBudget?.recordSuccess(lastRetryCost);
        return { value: value as T, report: finish('ok', 'ok') };
      }
      // Cancelled mid-flight: the caller's abort is the reason, not the budget the attempt used.
      return giveUp(abortedInFlight ? 'aborted' : decision.reason, decision.outcome);
    }
    if (signal?.aborted) {
      keep(withoutDelay(record));
      giveUp('aborted', outcomeSoFar());
    }
    if (options.mayRetry === false) {
      keep(withoutDelay(record));
      giveUp('unsafe_to_retry', outcomeSoFar());
    }
    if (retryBudget) {
      const cost = retryBudget.costOf(decision.afterTimeout);
      if (!retryBudget.tryAcquire(cost)) {
        keep(withoutDelay(record));
        giveUp('retry_budget_drained', outcomeSoFar());
      }
      lastRetryCost = cost;
    }
    keep(record);
    const sleepStartedAt = clock.now();
    try {
      await clock.sleep(decision.delayMs, signal);
    } catch {
      totalSleptMs += clock.now() - sleepStartedAt;
      giveUp('aborted', outcomeSoFar());
    }
    totalSleptMs += clock.now() - sleepStartedAt;
  }
}

function withoutDelay(record: AttemptRecord): AttemptRecord {
  const { delayMs: _delay, delayReason: _reason, ...rest } = record;
  return rest;
}

/** Values with a numeric status are HTTP-like answers; anything else means the operation succeeded. */
export function defaultObserve(value: unknown): Observation {
  if (typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number') {
    const { status, headers } = value as { status: number; headers?: { get?(name: string): string | null } };
    const get = typeof headers?.get === 'function' ? (name: string) => headers.get!(name) : () => null;
    return { kind: 'response', status, retryAfter: get('retry-after'), date: get('date') };
  }
  return { kind: 'response', status: 200 };
}

/** Timeouts and transport failures are unknown (the work may have happened); other errors fail. */
export function defaultClassifyError(error: unknown): Observation {
  if (isTransportError(error)) return { kind: 'unknown', status: SYNTHETIC_TIMEOUT_STATUS, detail: describeError(error) };
  return { kind: 'failure', detail: describeError(error) };
}
