import { InvalidOptionError } from '../contract/errors.js';
import type { Jitter } from '../policy/backoff.js';
import { resolveRetryPolicy } from '../policy/retry-options.js';
import type { IntentPolicy } from './intent.js';
import { createTextMemo } from './text-memo.js';

/**
 * The outbox's default waits between attempts, Svix's (docs.svix.com/retries): 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h, so eight attempts span about 27.5 hours. An endpoint down for a
 * working day gets its messages when it returns, none dead. Each step is lengthened by up to 10 %
 * (jitter 'full'), never shortened.
 */
export const DEFAULT_OUTBOX_SCHEDULE_MS: readonly number[] = Object.freeze([
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
]);

/**
 * The outbox's retry policy (DESIGN.md, "Defaults per role"): an outbox retries for a day, where
 * the interactive client (`DEFAULT_RETRY_POLICY`, `deliver`, `createClient`) gives up in seconds.
 * An intent records these unless it says otherwise, its endpoint's `retry` settings first.
 */
export const DEFAULT_OUTBOX_POLICY: IntentPolicy = Object.freeze({
  /** One attempt, then one per step of the schedule. @default 8 */
  maxAttempts: DEFAULT_OUTBOX_SCHEDULE_MS.length + 1,
  /** The first step, for an intent that asks for exponential backoff with a cap alone. @default 5000 */
  baseDelayMs: 5_000,
  /** The longest wait the outbox computes between two attempts. @default 36000000 (10 h) */
  maxDelayMs: 36_000_000,
  /** @default 'full' (each step lengthened by up to 10 %) */
  jitter: 'full' as Jitter,
  /** @default DEFAULT_OUTBOX_SCHEDULE_MS */
  schedule: DEFAULT_OUTBOX_SCHEDULE_MS,
  /**
   * A receiver's Retry-After is obeyed however long, up to the intent's deadline: the message
   * waits, it does not die (Infinity; JSON null). @default Infinity
   */
  maxRetryAfterMs: Number.POSITIVE_INFINITY,
  /**
   * A Retry-After is obeyed to the second: the message's next attempt is the instant the
   * endpoint is held until. @default 0
   */
  retryAfterJitterRatio: 0,
  /** @default 10000 */
  attemptTimeoutMs: 10_000,
});

/** The retry settings an intent or an endpoint may give; each absent one is the default's. */
export interface OutboxRetryInput {
  readonly maxAttempts?: number | undefined;
  readonly baseDelayMs?: number | undefined;
  readonly maxDelayMs?: number | undefined;
  readonly jitter?: Jitter | undefined;
  readonly schedule?: readonly number[] | null | undefined;
  readonly maxRetryAfterMs?: number | undefined;
  readonly retryAfterJitterRatio?: number | undefined;
  readonly attemptTimeoutMs?: number | undefined;
}

/**
 * An intent's whole policy: what it gives over `base` (its endpoint's settings) over
 * {@link DEFAULT_OUTBOX_POLICY}, checked once. A base delay without a schedule asks for
 * exponential backoff; a max delay alone cuts the default schedule's longer steps to it. A
 * schedule and a base delay given together, or a step or a base above the max delay, are
 * refused (InvalidOptionError), never capped silently. Without a limit of its own, a schedule
 * gets one attempt per step and one more.
 */
export function resolveOutboxPolicy(
  input: OutboxRetryInput,
  base: OutboxRetryInput = {},
): IntentPolicy {
  const given = defined(input);
  if (given.schedule != null && given.baseDelayMs !== undefined)
    throw new InvalidOptionError(
      'baseDelayMs',
      given.baseDelayMs,
      'no base delay with a schedule: either fixed steps or exponential backoff',
    );
  const layered = { ...defined(base), ...given };
  // The intent's own base delay outranks its endpoint's schedule: it asked for backoff.
  if (given.baseDelayMs !== undefined && given.schedule === undefined) layered.schedule = null;
  const maxDelayMs = layered.maxDelayMs ?? DEFAULT_OUTBOX_POLICY.maxDelayMs;
  const schedule =
    layered.schedule !== undefined
      ? layered.schedule
      : layered.baseDelayMs !== undefined
        ? null
        : DEFAULT_OUTBOX_SCHEDULE_MS.map((step) => Math.min(step, maxDelayMs));
  const maxAttempts =
    layered.maxAttempts ??
    (schedule === null ? DEFAULT_OUTBOX_POLICY.maxAttempts : schedule.length + 1);
  const policy = resolveRetryPolicy({
    ...DEFAULT_OUTBOX_POLICY,
    ...layered,
    maxDelayMs,
    schedule: schedule === null ? null : [...schedule],
    maxAttempts,
  });
  const attemptTimeoutMs = layered.attemptTimeoutMs ?? DEFAULT_OUTBOX_POLICY.attemptTimeoutMs;
  if (
    typeof attemptTimeoutMs !== 'number' ||
    !Number.isFinite(attemptTimeoutMs) ||
    attemptTimeoutMs <= 0
  )
    throw new InvalidOptionError(
      'attemptTimeoutMs',
      attemptTimeoutMs,
      'a finite number of milliseconds > 0',
    );
  return {
    maxAttempts: policy.maxAttempts,
    baseDelayMs: policy.baseDelayMs,
    maxDelayMs: policy.maxDelayMs,
    jitter: policy.jitter,
    schedule: policy.schedule,
    maxRetryAfterMs: policy.maxRetryAfterMs,
    retryAfterJitterRatio: policy.retryAfterJitterRatio,
    attemptTimeoutMs,
  };
}

/**
 * A policy read back from JSON: Infinity was written as null. Rows written before schedules have
 * neither `schedule` nor `retryAfterJitterRatio`, and keep the client's behaviour they had.
 * Frozen: one object serves every row with this text (a batch reads one text many times).
 */
export const policyFromJson: (text: string) => IntentPolicy = createTextMemo((text) => {
  const read = JSON.parse(text) as IntentPolicy & { maxRetryAfterMs: number | null };
  const whole =
    read.maxRetryAfterMs === null ? { ...read, maxRetryAfterMs: Number.POSITIVE_INFINITY } : read;
  if (Array.isArray(whole.schedule)) Object.freeze(whole.schedule);
  return Object.freeze(whole);
});

/** The settings given, as an object without undefined values. */
type Given = { -readonly [K in keyof OutboxRetryInput]?: Exclude<OutboxRetryInput[K], undefined> };

function defined(input: OutboxRetryInput): Given {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input ?? {}))
    if (value !== undefined)
      // Infinity went through JSON (an endpoint row) as null.
      out[name] = name === 'maxRetryAfterMs' && value === null ? Number.POSITIVE_INFINITY : value;
  return out as Given;
}
