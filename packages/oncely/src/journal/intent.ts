import type { Jitter } from '../policy/backoff.js';
import type { StopReason } from '../policy/decide.js';
import type { Outcome } from '../contract/status-class.js';
import type { AttemptResponse } from './attempt-response.js';

/**
 * Where an intent stands. `pending` is the only unfinished state; every other one is the final
 * outcome, recorded once (docs/origins.md, "The dropbox's swallowed ack": "a terminal receipt you are willing to trust"):
 * - `delivered`: a 2xx came back; its status and body are kept as the receipt;
 * - `refused`: the receiver said no for good (a fatal or unlisted status, a failed operation);
 * - `gave_up`: the budget or the deadline ran out and every attempt was answered (nothing happened);
 * - `unknown`: it stopped after an attempt whose answer never came: the work may have happened;
 * - `cancelled`: a person cancelled it (`oncely outbox cancel`).
 */
export const INTENT_STATES = [
  'pending',
  'delivered',
  'refused',
  'gave_up',
  'unknown',
  'cancelled',
] as const;
export type IntentState = (typeof INTENT_STATES)[number];

/** The retry policy an intent carries with it, so a restarted worker honours it (all JSON). */
export interface IntentPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly jitter: Jitter;
  /** Fixed waits in place of exponential backoff (docs/outbox.md, "Retry schedule"); absent on rows of an earlier oncely. */
  readonly schedule?: readonly number[] | null;
  /** Infinity (null in JSON): any Retry-After that ends before the deadline is obeyed. */
  readonly maxRetryAfterMs: number;
  /** How far jitter stretches a Retry-After; absent on rows of an earlier oncely (then 0.5). */
  readonly retryAfterJitterRatio?: number;
  readonly attemptTimeoutMs: number;
}

/** What a new intent holds before its first attempt: everything needed to send it again. */
export interface NewIntent {
  readonly key: string;
  readonly target: string;
  readonly method: string;
  /** Headers sent on every attempt, secrets excluded. Names are lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** Names of headers whose values are re-supplied at send time and never written down. */
  readonly secretHeaders: readonly string[];
  /** The complete payload, byte for byte. */
  readonly body: Uint8Array;
  readonly policy: IntentPolicy;
  /** No attempt starts at or after this instant (ms since the epoch); null for none. */
  readonly deadlineAt: number | null;
  /** Who recorded it: a program, a user, a service. */
  readonly createdBy: string;
  readonly createdAt: number;
  /**
   * Intents of one ordering key go out one at a time, in record order: none is claimed while an
   * earlier one of its key is pending (docs/outbox.md, "Ordering"). Null: no order, no waiting.
   */
  readonly orderingKey: string | null;
  /** The endpoint it goes to (its URL, secrets, state and throttle), or null for `target` alone. */
  readonly endpoint?: string | null;
}

/** An intent as the journal holds it. */
export interface IntentRecord extends NewIntent {
  readonly state: IntentState;
  /** Attempts started so far, an interrupted one included. */
  readonly attemptCount: number;
  /** The earliest instant the next attempt may start. */
  readonly nextAttemptAt: number;
  /** The last backoff chosen: decorrelated jitter grows from it across restarts. */
  readonly previousDelayMs: number;
  /** Some attempt ended without an answer: a give-up is then `unknown`, never `gave_up`. */
  readonly sawUnknown: boolean;
  /** The final outcome's details; null while pending. */
  readonly outcome: FinalRecord | null;
}

/** The final outcome, written once. For `delivered`, status and body are the receipt. */
export interface FinalRecord {
  readonly stopReason: StopReason | 'cancelled';
  readonly status: number | null;
  readonly body: Uint8Array | null;
  readonly detail: string | null;
  readonly finishedAt: number;
}

/** One attempt as the journal holds it: started durably before the request left. */
export interface AttemptEntry {
  readonly key: string;
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: number;
  /** Null while it runs, or forever when its worker died mid-attempt. */
  readonly endedAt: number | null;
  readonly outcome: Outcome | null;
  readonly status: number | null;
  readonly detail: string | null;
  /** The wait chosen after it, when another attempt follows. */
  readonly delayMs: number | null;
  /** How long its request took, send to answer or failure (a throttle wait left out); null when unknown. */
  readonly durationMs: number | null;
  /** The response's headers and first 4 KiB (attempt-response.ts); null without a response. */
  readonly response: AttemptResponse | null;
}

/** An intent a worker holds a lease on. `token` fences every later write to it. */
export interface ClaimedIntent {
  readonly intent: IntentRecord;
  readonly token: string;
  /** Its last attempt was started and never settled: the worker that sent it is gone. */
  readonly interrupted: boolean;
  /**
   * Set by `claimStarting`: attempt `intent.attemptCount + 1` was started with the claim (by the
   * claiming owner, at the claim's instant), so the worker sends it without `startAttempts`.
   */
  readonly started?: boolean;
}

/** What a worker writes after an attempt (or instead of one): the attempt's end and what comes next. */
export interface Settlement {
  readonly key: string;
  readonly token: string;
  /** The attempt being closed, if any (absent when the intent stops before sending). */
  readonly attempt?: {
    readonly attempt: number;
    readonly endedAt: number;
    readonly outcome: Outcome;
    readonly status: number | null;
    readonly detail: string | null;
    readonly delayMs: number | null;
    /** For the attempt log (absent: not kept). */
    readonly durationMs?: number | null;
    readonly response?: AttemptResponse | null;
  };
  /** `pending` with the next attempt's time, or a final state with its record. */
  readonly next:
    | {
        readonly state: 'pending';
        readonly nextAttemptAt: number;
        readonly previousDelayMs: number;
        readonly sawUnknown: boolean;
      }
    | {
        readonly state: Exclude<IntentState, 'pending'>;
        readonly sawUnknown: boolean;
        readonly final: FinalRecord;
      };
}

/** One attempt about to start: written durably before the request leaves. */
export interface AttemptStart {
  readonly key: string;
  readonly token: string;
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: number;
}

/** How many intents are in each state. */
export type StateCounts = Readonly<Record<IntentState, number>>;

export function emptyCounts(): Record<IntentState, number> {
  return { pending: 0, delivered: 0, refused: 0, gave_up: 0, unknown: 0, cancelled: 0 };
}

export function isFinished(state: IntentState): boolean {
  return state !== 'pending';
}
