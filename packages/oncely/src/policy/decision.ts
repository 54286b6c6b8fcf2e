import type { Outcome } from '../contract/status-class.js';
import type { RetryAfter } from '../contract/retry-after.js';

/** Why a retry loop ended. A closed set: callers switch on it. */
export const STOP_REASONS = [
  'ok',
  'fatal_status',
  'unlisted_status',
  'operation_failed',
  'budget_exhausted',
  'deadline_passed',
  'retry_budget_drained',
  'retry_after_too_long',
  'unsafe_to_retry',
  'aborted',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** Why a delay has the length it has. */
export const DELAY_REASONS = ['backoff', 'retry-after', 'retry-after-unparsed'] as const;
export type DelayReason = (typeof DELAY_REASONS)[number];

/** The final word on an intent: done, refused, or perhaps done (never "refused" after an unknown). */
export type FinalOutcome = 'ok' | 'fail' | 'unknown';

export type Decision =
  | {
      readonly action: 'stop';
      readonly reason: StopReason;
      readonly outcome: FinalOutcome;
      /** How this attempt was classified. */
      readonly attemptOutcome: Outcome;
      readonly retryAfter: RetryAfter;
    }
  | {
      readonly action: 'retry';
      readonly attemptOutcome: Outcome;
      readonly delayMs: number;
      readonly delayReason: DelayReason;
      readonly retryAfter: RetryAfter;
      /** A retry after a timeout or transport failure: it costs more retry tokens. */
      readonly afterTimeout: boolean;
      /**
       * Retry tokens this retry takes from `inputs.retryTokens` (0 without a bucket). The driver
       * takes them at once, before anything else can touch the shared bucket.
       */
      readonly retryCost: number;
    };
