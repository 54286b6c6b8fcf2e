import { InvalidOptionError } from '../contract/errors.js';
import { HEADER } from '../contract/headers.js';
import { validateKey } from '../contract/idempotency-key.js';
import {
  KEY_HEADER_FORMS,
  keyFieldValue,
  readKeyField,
  type KeyHeaderForm,
} from '../contract/key-field.js';
import type { Observation } from '../policy/decide.js';
import {
  deadlineFrom,
  resolveRetryPolicy,
  type RetryPolicyOptions,
} from '../policy/retry-options.js';
import type { RetryBudget } from '../policy/retry-budget.js';
import { systemClock, type Clock } from '../time/clock.js';
import { systemRandom, type Random } from '../time/random.js';
import { defaultClassifyError } from './default-observe.js';
import { prepareRetry, withCall } from './prepare-retry.js';
import type { RetryResult } from './retry-result.js';
import { runPrepared } from './run-prepared.js';
import { fetchAttempt } from './fetch-attempt.js';
import { toHttpRetryError } from './http-retry-error.js';
import { isRetryError, type AttemptRecord } from './retry-report.js';
import {
  checkThrowOn,
  settledFailure,
  type ClientResult,
  type ClientResultFor,
  type SettledClientResult,
  type ThrowOn,
} from './throw-on.js';

export type { ClientResult, ClientResultFor, SettledClientResult, ThrowOn };

/**
 * Methods whose repetition has the effect of one send (RFC 9110 section 9.2.2): retried freely.
 * POST and PATCH are not; they are retried only under an Idempotency-Key.
 */
export const IDEMPOTENT_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'] as const;

/** The policy options a client takes once; the deadline is each request's own (`deadlineAt`). */
export interface ClientOptions<T extends ThrowOn = 'give-up'>
  extends Partial<Omit<RetryPolicyOptions, 'deadlineAt'>> {
  /** @default globalThis.fetch */
  readonly fetch?: typeof globalThis.fetch;
  /** Reads the time for deadlines and Retry-After, and sleeps between attempts. @default systemClock */
  readonly clock?: Clock;
  /**
   * Times each attempt out. Kept apart from `clock` because an attempt is real I/O: a virtual
   * clock that jumps forward on every sleep would time every attempt out at once. Pass the same
   * manual VirtualClock to drive timeouts in a test. @default systemClock
   */
  readonly timer?: Clock;
  /** @default systemRandom */
  readonly random?: Random;
  /**
   * Shared by every request of this client (a RetryTokenBucket), or by every process (a shared
   * budget on SQLite or PostgreSQL, docs/client.md): when drained, retries are refused.
   */
  readonly retryBudget?: RetryBudget;
  /** @default 10000 */
  readonly attemptTimeoutMs?: number;
  /** Called after every attempt is decided, for progress output. */
  readonly onAttempt?: (record: AttemptRecord) => void;
  /**
   * `'never'`: `request()` resolves with the last response, its problem and the report however
   * the intent ends, instead of rejecting when it ends without a 2xx. @default 'give-up'
   */
  readonly throwOn?: T;
  /**
   * How `idempotencyKey` goes on the wire. `'string'`: the IETF draft's form (section 2.1), a
   * Structured Field String, `Idempotency-Key: "k"` with `"` and `\` escaped (RFC 9651 section
   * 3.3.3). `'bare'`: the key's text unquoted, `Idempotency-Key: k`, for a server that takes the
   * header's raw text as the key (as Stripe's API does) and would keep the quotes as part of it.
   * An Idempotency-Key set in `headers` is sent as written, whatever this says.
   * @default 'string'
   */
  readonly keyHeaderForm?: KeyHeaderForm;
}

export const DEFAULT_CLIENT_OPTIONS = {
  /** One attempt may take this long, body included, and never longer than the deadline allows. */
  attemptTimeoutMs: 10_000,
  /** The IETF draft's form of the key on the wire, `Idempotency-Key: "k"` (its section 2.1). */
  keyHeaderForm: 'string',
} as const;

/** fetch's options, plus what makes a retry the same intent. */
export interface OncelyRequestInit extends RequestInit {
  /** Sent as Idempotency-Key on every attempt; makes POST and PATCH retryable. */
  idempotencyKey?: string;
  maxAttempts?: number;
  /** The deadline: no attempt starts at or after this instant (ms since the epoch, on the client's clock). */
  deadlineAt?: number;
  /** @deprecated The older name of `deadlineAt`, still accepted. */
  closesAt?: number;
  attemptTimeoutMs?: number;
  onAttempt?: (record: AttemptRecord) => void;
}

export interface Client<T extends ThrowOn = 'give-up'> {
  /**
   * Sends one intent until a 2xx or the policy stops. Resolves with the response and the report;
   * otherwise rejects with an {@link HttpRetryError} (a RetryError): `report` lists every attempt,
   * `response` is the last attempt's Response (undefined when it got none) and `problem` its
   * parsed problem+json body, when it has one. On a client made with `throwOn: 'never'` it
   * resolves with all of that instead, a 2xx or not ({@link SettledClientResult}).
   */
  request(url: string | URL, init?: OncelyRequestInit): Promise<ClientResultFor<T>>;
}

export function createClient<T extends ThrowOn = 'give-up'>(
  options: ClientOptions<T> = {},
): Client<T> {
  const {
    throwOn: throwOnOption,
    fetch: fetchOption,
    clock: clockOption,
    timer: timerOption,
    random: randomOption,
    retryBudget,
    onAttempt,
    attemptTimeoutMs: timeoutOption,
    keyHeaderForm: formOption,
    ...policyOptions
  } = options;
  const keyHeaderForm = checkKeyHeaderForm(formOption ?? DEFAULT_CLIENT_OPTIONS.keyHeaderForm);
  const fetchImpl = fetchOption ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function')
    throw new InvalidOptionError('fetch', fetchImpl, 'a fetch function');
  const clock = clockOption ?? systemClock;
  const timer = timerOption ?? systemClock;
  const random = randomOption ?? systemRandom;
  const defaultTimeoutMs = checkTimeout(timeoutOption ?? DEFAULT_CLIENT_OPTIONS.attemptTimeoutMs);
  const settles = checkThrowOn(throwOnOption ?? 'give-up') === 'never';
  // Resolved and validated once per client; a request pays only for what it overrides.
  const prepared = prepareRetry<Response>({
    ...policyOptions,
    clock,
    random,
    retryBudget,
    observe: observeResponse,
    classifyError: defaultClassifyError,
  });

  const client: Client<ThrowOn> = {
    async request(url, init = {}) {
      const {
        idempotencyKey,
        maxAttempts,
        deadlineAt: deadlineOption,
        closesAt,
        attemptTimeoutMs,
        onAttempt: onRequestAttempt,
        signal,
        headers: headersInit,
        ...fetchInit
      } = init;
      const method = (fetchInit.method ?? 'GET').toUpperCase();
      const headers = new Headers(headersInit);
      const key = keyOnHeaders(headers, idempotencyKey, keyHeaderForm);
      if (fetchInit.body instanceof ReadableStream) {
        throw new InvalidOptionError(
          'body',
          'a ReadableStream',
          'a string, bytes, Blob, FormData or URLSearchParams: a stream cannot be sent twice',
        );
      }
      const timeoutMs =
        attemptTimeoutMs === undefined ? defaultTimeoutMs : checkTimeout(attemptTimeoutMs);
      const givenDeadline = deadlineFrom(deadlineOption, closesAt);
      const deadlineAt = givenDeadline ?? Number.POSITIVE_INFINITY;
      const outer = signal ?? undefined;

      const attempt = fetchAttempt({
        fetch: fetchImpl,
        url,
        init: { ...fetchInit, method, headers },
        timeoutMs,
        deadlineAt,
        clock,
        timer,
        signal: outer,
      });
      const policy =
        maxAttempts === undefined && givenDeadline === undefined
          ? prepared.policy
          : requestPolicy(prepared.policy, maxAttempts, deadlineAt);
      const call = withCall(prepared, {
        key,
        signal: outer,
        mayRetry: key !== undefined || (IDEMPOTENT_METHODS as readonly string[]).includes(method),
        onAttempt: bothOnAttempt(onAttempt, onRequestAttempt),
      });
      let result: RetryResult<Response>;
      try {
        result = await runPrepared(attempt, { ...call, policy });
      } catch (error) {
        if (!isRetryError(error)) throw error;
        const giveUp = await toHttpRetryError(error);
        if (settles) return settledFailure(giveUp);
        throw giveUp;
      }
      return settles
        ? { ok: true, response: result.value, report: result.report, problem: undefined }
        : { response: result.value, report: result.report };
    },
  };
  // The options fixed T; the object answers as that T says (a settled result exactly when 'never').
  return client as Client<T>;
}

/** A response as the policy sees it: its status, and the Retry-After and Date that measure the wait. */
export function observeResponse(response: Response): Observation {
  return {
    kind: 'response',
    status: response.status,
    retryAfter: response.headers.get(HEADER.retryAfter),
    date: response.headers.get(HEADER.date),
  };
}

/** The request's key, written on `headers` unless an Idempotency-Key set by hand is there. */
function keyOnHeaders(
  headers: Headers,
  idempotencyKey: string | undefined,
  form: KeyHeaderForm,
): string | undefined {
  const fromHeader = headers.get(HEADER.idempotencyKey);
  const key = resolveKey(idempotencyKey, fromHeader);
  if (key !== undefined && fromHeader === null)
    headers.set(HEADER.idempotencyKey, keyFieldValue(key, form));
  return key;
}

function checkKeyHeaderForm(value: KeyHeaderForm): KeyHeaderForm {
  if (!KEY_HEADER_FORMS.includes(value))
    throw new InvalidOptionError('keyHeaderForm', value, `one of ${KEY_HEADER_FORMS.join(', ')}`);
  return value;
}

/**
 * The request's key: the option, or the key an Idempotency-Key header set by hand carries
 * (`"k"` or a bare `k`, read as a server reads it), and the same key when both are given.
 */
function resolveKey(fromOption: string | undefined, fromHeader: string | null): string | undefined {
  const read = fromHeader === null ? undefined : readKeyField(fromHeader);
  if (read !== undefined && !read.ok)
    throw new InvalidOptionError('headers', fromHeader, `one Idempotency-Key: ${read.problem}`);
  const headerKey = read?.key;
  if (fromOption !== undefined && headerKey !== undefined && fromOption !== headerKey) {
    throw new InvalidOptionError(
      'idempotencyKey',
      fromOption,
      `the same key as the Idempotency-Key header (${JSON.stringify(fromHeader)})`,
    );
  }
  const key = fromOption ?? headerKey;
  return key === undefined ? undefined : validateKey(key);
}

function checkTimeout(value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError('attemptTimeoutMs', value, 'a finite number of milliseconds > 0');
  }
  return value;
}

/** The client's policy with one request's own attempt budget and deadline on top. */
function requestPolicy(
  policy: RetryPolicyOptions,
  maxAttempts: number | undefined,
  deadlineAt: number,
): RetryPolicyOptions {
  return resolveRetryPolicy({
    ...policy,
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    deadlineAt,
  });
}

/** The client's progress callback and the request's, both called; undefined when neither is set. */
function bothOnAttempt(
  forClient: ((record: AttemptRecord) => void) | undefined,
  forRequest: ((record: AttemptRecord) => void) | undefined,
): ((record: AttemptRecord) => void) | undefined {
  if (!forClient && !forRequest) return undefined;
  return (record) => {
    forClient?.(record);
    forRequest?.(record);
  };
}
