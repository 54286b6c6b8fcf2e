import { SYNTHETIC_TIMEOUT_STATUS } from '../contract/status-class.js';
import { validateKey } from '../contract/idempotency-key.js';
import { InvalidOptionError } from '../contract/errors.js';
import {
  decide,
  decidesWithoutClock,
  decideStart,
  INITIAL_RETRY_STATE,
  type Decision,
  type FinalOutcome,
  type Observation,
  type RetryState,
  type StopReason,
} from '../policy/decide.js';
import {
  resolveRetryPolicy,
  type RetryPolicyInput,
  type RetryPolicyOptions,
} from '../policy/retry-options.js';
import type { RetryTokenBucket } from '../policy/retry-token-bucket.js';
import { systemClock, type Clock } from '../time/clock.js';
import { systemRandom, type Random } from '../time/random.js';
import { observeError } from './transport-error.js';
import { AttemptLog, attemptRecord } from './attempt-log.js';
import { RetryError, type AttemptRecord, type RetryReport } from './retry-report.js';

/** What each attempt is given. The key is the same on every attempt: that is the point. */
export interface AttemptContext {
  readonly attempt: number;
  readonly key: string | undefined;
  readonly signal: AbortSignal | undefined;
}

export interface RetryOptions<T> extends RetryPolicyInput {
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

export interface RetryResult<T> {
  readonly value: T;
  readonly report: RetryReport;
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
  readonly retryBudget: RetryTokenBucket | undefined;
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
    readonly retryTokens: RetryTokenBucket | undefined;
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
    inputs: { aborted: false, mayRetry, retryTokens: options.retryBudget },
    clock: options.clock ?? systemClock,
    random: options.random ?? systemRandom,
    signal: options.signal,
    retryBudget: options.retryBudget,
    observe: options.observe ?? (defaultObserve as (value: T) => Observation),
    classifyError: options.classifyError ?? defaultClassifyError,
    onAttempt: options.onAttempt,
  };
}

/**
 * A retry whose options are resolved once, for a client that runs many intents with one policy:
 * each call pays only for its attempts. `call` sets what belongs to one intent (its key, signal).
 */
export function createRetry<T>(
  options: RetryOptions<T> = {},
): (
  operation: (context: AttemptContext) => T | Promise<T>,
  call?: RetryCall,
) => Promise<RetryResult<T>> {
  const prepared = prepareRetry(options);
  return (operation, call) =>
    runPrepared(operation, call === undefined ? prepared : withCall(prepared, call));
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
    inputs: { aborted: false, mayRetry, retryTokens: prepared.retryBudget },
    onAttempt: call.onAttempt ?? prepared.onAttempt,
  };
}

/**
 * Runs `operation` until it succeeds or the policy stops it. Every attempt gets the same key;
 * sleeps go through the injected clock; the report lists every attempt with its delay and why.
 * Resolves with the value and the report on success; otherwise rejects with a {@link RetryError}
 * that carries the report. Resolves `options` on every call: a caller running many intents with
 * one policy uses {@link createRetry}.
 */
export function retry<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  options: RetryOptions<T> = {},
): Promise<RetryResult<T>> {
  let prepared: PreparedRetry<T>;
  try {
    prepared = prepareRetry(options);
  } catch (error) {
    return Promise.reject(error);
  }
  return runPrepared(operation, prepared);
}

/** An attempt judged by the policy step, with what it returned or threw. */
interface Judged<T> {
  readonly decision: Decision;
  readonly state: RetryState;
  readonly value: T | undefined;
  readonly lastValue: unknown;
  readonly lastError: unknown;
  readonly endedAt: number;
}

/**
 * The driver of the policy step: every stop reason comes from `decideStart` and `decide`; the
 * driver only runs attempts, sleeps, spends the retry tokens a retry costs, and keeps the record.
 *
 * Most calls end with their first attempt, so it runs without an async frame of its own: the
 * operation's promise is chained once, a success reads the clock twice (the attempt's start and
 * end, which its report carries) and allocates its result and nothing else. The attempt log is
 * made only when a loop goes on, in {@link retryLoop}. Never throws: every failure rejects.
 */
export function runPrepared<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
): Promise<RetryResult<T>> {
  try {
    return startFirstAttempt(operation, prepared);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Everything up to the first attempt's promise; what it throws, runPrepared rejects with. */
function startFirstAttempt<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
): Promise<RetryResult<T>> {
  const { signal } = prepared;
  // Without a signal nothing can cancel: one shared inputs object serves every call.
  const inputs =
    signal === undefined ? prepared.inputs : { ...prepared.inputs, aborted: signal.aborted };
  // Untimed, the start is NaN: only a deadline compares it, and then the attempt is timed.
  const startedAt = prepared.timesFirstAttempt ? prepared.clock.now() : Number.NaN;
  const refusal = decideStart(INITIAL_RETRY_STATE, startedAt, prepared.policy, inputs);
  if (refusal) {
    const log = new AttemptLog(prepared.key, startedAt);
    throw giveUp(log, refusal.reason, refusal.outcome, prepared, undefined, undefined);
  }
  let pending: T | Promise<T>;
  try {
    pending = operation(firstAttemptContext(prepared));
  } catch (error) {
    return firstAttemptThrew(operation, prepared, inputs, startedAt, error);
  }
  return Promise.resolve(pending).then(
    (value) => firstAttemptReturned(operation, prepared, inputs, startedAt, value),
    (error: unknown) => firstAttemptThrew(operation, prepared, inputs, startedAt, error),
  );
}

/** The common path, inline: observe, read the clock once, ask the step; a success ends here. */
function firstAttemptReturned<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  startedAt: number,
  value: T,
): RetryResult<T> | Promise<RetryResult<T>> {
  const { signal } = prepared;
  const observation = prepared.observe(value);
  const endedAt =
    prepared.timesFirstAttempt || !decidesWithoutClock(observation, prepared.policy)
      ? prepared.clock.now()
      : Number.NaN;
  if (signal !== undefined) inputs.aborted = signal.aborted;
  const step = decide(
    INITIAL_RETRY_STATE,
    observation,
    endedAt,
    prepared.random,
    prepared.policy,
    inputs,
  );
  const decision = step[0];
  if (decision.action === 'stop' && decision.reason === 'ok') {
    const { onAttempt, retryBudget } = prepared;
    onAttempt?.(attemptRecord({ attempt: 1, startedAt, endedAt, observation, decision }));
    retryBudget?.recordSuccess(0);
    return new FirstAttemptSuccess(
      value,
      prepared.key,
      startedAt,
      endedAt,
      observation,
      decision,
      retryBudget?.balance,
    );
  }
  const log = new AttemptLog(prepared.key, startedAt);
  log.add(1, startedAt, endedAt, observation, decision, prepared.onAttempt);
  const judged: Judged<T> = {
    decision,
    state: step[1],
    value,
    lastValue: value,
    lastError: undefined,
    endedAt,
  };
  return retryLoop(operation, prepared, inputs, log, judged);
}

/** The first attempt threw (or its promise rejected): judge it, then go on in the loop. */
function firstAttemptThrew<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  startedAt: number,
  error: unknown,
): Promise<RetryResult<T>> {
  const log = new AttemptLog(prepared.key, startedAt);
  const judged = judge(
    prepared,
    inputs,
    log,
    INITIAL_RETRY_STATE,
    startedAt,
    undefined,
    error,
    true,
    undefined,
  );
  return retryLoop(operation, prepared, inputs, log, judged);
}

/** What the first attempt is given: the shared context, unless this call has its own key or signal. */
function firstAttemptContext(
  prepared: Pick<PreparedRetry<unknown>, 'firstContext' | 'key' | 'signal'>,
): AttemptContext {
  const shared = prepared.firstContext;
  return shared.key === prepared.key && shared.signal === prepared.signal
    ? shared
    : { attempt: 1, key: prepared.key, signal: prepared.signal };
}

/** Everything after a first attempt that did not succeed: stop, or pay, wait and try again. */
async function retryLoop<T>(
  operation: (context: AttemptContext) => T | Promise<T>,
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  log: AttemptLog,
  first: Judged<T>,
): Promise<RetryResult<T>> {
  const { clock, signal, retryBudget, policy } = prepared;
  let judged = first;
  let lastRetryCost = 0;
  for (;;) {
    const { decision, state } = judged;
    if (decision.action === 'stop') {
      if (decision.reason === 'ok') {
        retryBudget?.recordSuccess(lastRetryCost);
        return new LoggedSuccess(judged.value as T, log, judged.endedAt, retryBudget?.balance);
      }
      throw giveUp(
        log,
        decision.reason,
        decision.outcome,
        prepared,
        judged.lastValue,
        judged.lastError,
      );
    }
    if (retryBudget) {
      // decide() saw that the bucket covers the cost, and nothing ran since: this cannot fail.
      retryBudget.tryAcquire(decision.retryCost);
      lastRetryCost = decision.retryCost;
    }
    const sleepStartedAt = clock.now();
    try {
      await clock.sleep(decision.delayMs, signal);
    } catch {
      log.slept(clock.now() - sleepStartedAt);
      throw giveUp(
        log,
        'aborted',
        state.sawUnknown ? 'unknown' : 'fail',
        prepared,
        judged.lastValue,
        judged.lastError,
      );
    }
    const attemptStartedAt = clock.now();
    log.slept(attemptStartedAt - sleepStartedAt);
    if (signal !== undefined) inputs.aborted = signal.aborted;
    const refusal = decideStart(state, attemptStartedAt, policy, inputs);
    if (refusal)
      throw giveUp(
        log,
        refusal.reason,
        refusal.outcome,
        prepared,
        judged.lastValue,
        judged.lastError,
      );
    try {
      const value = await operation({ attempt: state.attempt + 1, key: prepared.key, signal });
      judged = judge(
        prepared,
        inputs,
        log,
        state,
        attemptStartedAt,
        value,
        undefined,
        false,
        judged,
      );
    } catch (error) {
      judged = judge(
        prepared,
        inputs,
        log,
        state,
        attemptStartedAt,
        undefined,
        error,
        true,
        judged,
      );
    }
  }
}

/** Observes what an attempt returned or threw, asks the policy step, and records the attempt. */
function judge<T>(
  prepared: PreparedRetry<T>,
  inputs: PreparedRetry<T>['inputs'],
  log: AttemptLog,
  state: RetryState,
  attemptStartedAt: number,
  value: T | undefined,
  error: unknown,
  threw: boolean,
  previous: Judged<T> | undefined,
): Judged<T> {
  const { signal } = prepared;
  let observation: Observation;
  if (!threw) observation = prepared.observe(value as T);
  else observation = signal?.aborted === true ? ABORTED_IN_FLIGHT : prepared.classifyError(error);
  const endedAt = prepared.clock.now();
  if (signal !== undefined) inputs.aborted = signal.aborted;
  const [decision, next] = decide(
    state,
    observation,
    endedAt,
    prepared.random,
    prepared.policy,
    inputs,
  );
  log.add(next.attempt, attemptStartedAt, endedAt, observation, decision, prepared.onAttempt);
  return {
    decision,
    state: next,
    value,
    lastValue: threw ? previous?.lastValue : value,
    lastError: threw ? error : previous?.lastError,
    endedAt,
  };
}

/** The error a loop ends with when it gives up: the report, the last value and the last error. */
function giveUp(
  log: AttemptLog,
  reason: StopReason,
  outcome: FinalOutcome,
  prepared: Pick<PreparedRetry<unknown>, 'clock' | 'retryBudget'>,
  lastValue: unknown,
  lastError: unknown,
): RetryError {
  const report = log.report(reason, outcome, prepared.clock.now(), prepared.retryBudget?.balance);
  return new RetryError(report, lastValue, lastError);
}

/** An attempt cut by the caller's own abort: it may have happened. */
const ABORTED_IN_FLIGHT: Observation = {
  kind: 'unknown',
  status: SYNTHETIC_TIMEOUT_STATUS,
  reason: 'aborted',
  detail: 'aborted',
};

/*
 * A success's report is built only when someone reads it: the common path never does. Two
 * classes, no shared base: a derived constructor is a measurable part of a first success's cost.
 */

/** A loop that succeeded on its first attempt: that attempt as observed, kept flat (one object). */
class FirstAttemptSuccess<T> implements RetryResult<T> {
  readonly value: T;
  readonly #key: string | undefined;
  readonly #startedAt: number;
  readonly #endedAt: number;
  readonly #observation: Observation;
  readonly #decision: Decision;
  readonly #balance: number | undefined;
  #report: RetryReport | undefined;

  constructor(
    value: T,
    key: string | undefined,
    startedAt: number,
    endedAt: number,
    observation: Observation,
    decision: Decision,
    balance: number | undefined,
  ) {
    this.value = value;
    this.#key = key;
    this.#startedAt = startedAt;
    this.#endedAt = endedAt;
    this.#observation = observation;
    this.#decision = decision;
    this.#balance = balance;
  }

  get report(): RetryReport {
    if (this.#report !== undefined) return this.#report;
    const log = new AttemptLog(this.#key, this.#startedAt);
    log.add(1, this.#startedAt, this.#endedAt, this.#observation, this.#decision, undefined);
    return (this.#report = log.report('ok', 'ok', this.#endedAt, this.#balance));
  }

  toJSON(): RetryResult<T> {
    return { value: this.value, report: this.report };
  }
}

/** A loop that succeeded after retries: its report is read from the attempt log. */
class LoggedSuccess<T> implements RetryResult<T> {
  readonly value: T;
  readonly #log: AttemptLog;
  readonly #endedAt: number;
  readonly #balance: number | undefined;
  #report: RetryReport | undefined;

  constructor(value: T, log: AttemptLog, endedAt: number, balance: number | undefined) {
    this.value = value;
    this.#log = log;
    this.#endedAt = endedAt;
    this.#balance = balance;
  }

  get report(): RetryReport {
    return (this.#report ??= this.#log.report('ok', 'ok', this.#endedAt, this.#balance));
  }

  toJSON(): RetryResult<T> {
    return { value: this.value, report: this.report };
  }
}

/** Values with a numeric status are HTTP-like answers; anything else means the operation succeeded. */
export function defaultObserve(value: unknown): Observation {
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { status?: unknown }).status === 'number'
  ) {
    const { status, headers } = value as {
      status: number;
      headers?: { get?(name: string): string | null };
    };
    const get =
      typeof headers?.get === 'function' ? (name: string) => headers.get!(name) : () => null;
    return { kind: 'response', status, retryAfter: get('retry-after'), date: get('date') };
  }
  return PLAIN_SUCCESS;
}

/** A value that is not an HTTP-like answer: the operation succeeded. One shared, frozen object. */
const PLAIN_SUCCESS: Observation = Object.freeze({ kind: 'response', status: 200 });

/**
 * The adapter boundary (docs/origins.md, "The webhook storm"): a transport failure is not a
 * status. A request that never left (refused, DNS) is `not_sent`: nothing happened. One that may
 * have arrived (reset, hang-up, our own timeout) is unknown, with a synthetic 408 that only the
 * policy's status table sees; reports never show it. Anything else (a bad URL, a bug) fails at once.
 */
export function defaultClassifyError(error: unknown): Observation {
  return observeError(error);
}
