import { InvalidOptionError } from '../contract/errors.js';
import { newKey, validateKey } from '../contract/idempotency-key.js';
import type { Jitter } from '../policy/backoff.js';
import type { NewIntent } from './intent.js';
import { resolveOutboxPolicy, type OutboxRetryInput } from './outbox-policy.js';
import { checkEndpointId } from './endpoint-input.js';

/** What a caller says about one intent. Only `target` is required. */
export interface IntentInput {
  /** @default a fresh UUID; pass your own to make re-recording the same intent a no-op */
  readonly key?: string;
  /** Where to send it; absent when `endpoint` names the receiver (its URL is used). */
  readonly target?: string | URL;
  /** An endpoint of the journal (`journal.endpoints.add`): its URL, secrets, state and throttle apply. */
  readonly endpoint?: string;
  /** @default 'POST' */
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Header names whose values are secrets (Authorization, an API key): never written to the
   * journal (docs/origins.md, "The notes' retry contract": "don't log secrets"); the worker re-supplies them at send time.
   */
  readonly secretHeaders?: readonly string[];
  /** The complete payload. @default empty */
  readonly body?: string | Uint8Array;
  /**
   * The retry settings: each absent one is the endpoint's (`EndpointInput.retry`), else
   * DEFAULT_OUTBOX_POLICY's (docs/outbox.md, "Retry schedule"). @default 8 (one per step, and one)
   */
  readonly maxAttempts?: number;
  /** Exponential backoff from this first step, in place of the schedule. @default none */
  readonly baseDelayMs?: number;
  /** @default 36000000 (10 h) */
  readonly maxDelayMs?: number;
  /** @default 'full' */
  readonly jitter?: Jitter;
  /** @default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (DEFAULT_OUTBOX_SCHEDULE_MS) */
  readonly schedule?: readonly number[] | null;
  /** @default Infinity: any Retry-After before the deadline is obeyed */
  readonly maxRetryAfterMs?: number;
  /** @default 0: a Retry-After is obeyed to the second */
  readonly retryAfterJitterRatio?: number;
  /** @default 10000 */
  readonly attemptTimeoutMs?: number;
  /** No attempt starts at or after this instant. @default none */
  readonly deadlineAt?: number | null;
  /** @default 'oncely' */
  readonly createdBy?: string;
  /**
   * Delivered after every intent recorded before it with the same ordering key has finished
   * (delivered or dead), one at a time. @default none: no order
   */
  readonly orderingKey?: string | null;
}

/** Headers the worker writes itself on every attempt: a caller's copy would be stale or wrong. */
const RESERVED = new Set([
  'idempotency-key',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-length',
  'host',
]);

/**
 * Validates an intent once, at the edge, and strips its secrets. `retryBase`: its endpoint's
 * retry settings, under the intent's own.
 */
export function prepareIntent(
  input: IntentInput,
  nowMs: number,
  retryBase: OutboxRetryInput = {},
): NewIntent {
  if (typeof input !== 'object' || input === null)
    throw new InvalidOptionError('intent', input, 'an object with a target');
  const key = input.key === undefined ? newKey() : validateKey(input.key);
  let target: URL;
  try {
    target = new URL(input.target ?? '');
  } catch {
    throw new InvalidOptionError('target', String(input.target), 'an absolute http(s) URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new InvalidOptionError('target', String(input.target), 'an absolute http(s) URL');
  const method = (input.method ?? 'POST').toUpperCase();
  if (!/^[A-Z]+$/.test(method))
    throw new InvalidOptionError('method', input.method, 'an HTTP method');
  const secretHeaders = [...new Set((input.secretHeaders ?? []).map((name) => name.toLowerCase()))];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const lower = name.toLowerCase();
    if (RESERVED.has(lower))
      throw new InvalidOptionError(
        `headers.${name}`,
        value,
        `no ${name}: the worker sets it on every attempt`,
      );
    if (!secretHeaders.includes(lower)) headers[lower] = String(value);
  }
  const policy = resolveOutboxPolicy(
    {
      maxAttempts: input.maxAttempts,
      baseDelayMs: input.baseDelayMs,
      maxDelayMs: input.maxDelayMs,
      jitter: input.jitter,
      schedule: input.schedule,
      maxRetryAfterMs: input.maxRetryAfterMs,
      retryAfterJitterRatio: input.retryAfterJitterRatio,
      attemptTimeoutMs: input.attemptTimeoutMs,
    },
    retryBase,
  );
  const deadlineAt = input.deadlineAt ?? null;
  if (deadlineAt !== null && !Number.isFinite(deadlineAt))
    throw new InvalidOptionError(
      'deadlineAt',
      deadlineAt,
      'an instant in ms since the epoch, or null',
    );
  const body =
    typeof input.body === 'string'
      ? new TextEncoder().encode(input.body)
      : (input.body ?? new Uint8Array()).slice();
  const createdBy = input.createdBy ?? 'oncely';
  if (typeof createdBy !== 'string' || createdBy === '')
    throw new InvalidOptionError('createdBy', createdBy, 'a non-empty string');
  const orderingKey = input.orderingKey ?? null;
  if (
    orderingKey !== null &&
    (typeof orderingKey !== 'string' || orderingKey === '' || orderingKey.length > 255)
  )
    throw new InvalidOptionError('orderingKey', orderingKey, 'a string of 1 to 255 characters');
  return {
    key,
    target: target.href,
    method,
    headers,
    secretHeaders,
    body,
    policy,
    deadlineAt,
    createdBy,
    createdAt: nowMs,
    orderingKey,
    endpoint: input.endpoint === undefined ? null : checkEndpointId(input.endpoint),
  };
}

/** True when a stored intent and a new one ask for the same send (docs/origins.md, "The notes' retry contract": same key, same command). */
export function sameIntent(a: NewIntent, b: NewIntent): boolean {
  return (
    (a.endpoint ?? null) === (b.endpoint ?? null) &&
    (a.endpoint ? true : a.target === b.target) &&
    a.method === b.method &&
    a.orderingKey === b.orderingKey &&
    Buffer.compare(Buffer.from(a.body), Buffer.from(b.body)) === 0 &&
    JSON.stringify(sortedEntries(a.headers)) === JSON.stringify(sortedEntries(b.headers))
  );
}

const sortedEntries = (headers: Readonly<Record<string, string>>): [string, string][] =>
  Object.entries(headers).sort(([x], [y]) => (x < y ? -1 : 1));
