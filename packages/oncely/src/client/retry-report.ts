import type { RetryAfter } from '../contract/retry-after.js';
import type { Outcome } from '../contract/status-class.js';
import { describeTransportFailure, type TransportFailure } from '../contract/transport-failure.js';
import { OncelyError, isOncelyError } from '../contract/errors.js';
import type { DelayReason, FinalOutcome, StopReason } from '../policy/decide.js';

/** One attempt, as it happened. */
export interface AttemptRecord {
  /** Counts from 1. */
  readonly attempt: number;
  /** On the retry's clock; NaN when the attempt was not timed (`timings: false`). */
  readonly startedAt: number;
  /** On the retry's clock; NaN when the attempt was not timed (`timings: false`). */
  readonly endedAt: number;
  readonly outcome: Outcome;
  /** The status the server answered; absent when no response came (see `transport`). */
  readonly status?: number;
  /** For an attempt without a response: whether the request left, and why no answer came. */
  readonly transport?: TransportFailure;
  /** What went wrong, for unknown and failed attempts. */
  readonly detail?: string;
  /** The Retry-After the response carried, parsed; says whether a date was measured against the server's Date. */
  readonly retryAfter?: RetryAfter;
  /** The wait chosen after this attempt, and why; absent on the last attempt. */
  readonly delayMs?: number;
  readonly delayReason?: DelayReason;
}

/** Everything a caller needs to tell "delivered on try 12 after eleven 429s" from "delivered". */
export interface RetryReport {
  readonly key: string | undefined;
  readonly outcome: FinalOutcome;
  readonly stopReason: StopReason;
  readonly attempts: readonly AttemptRecord[];
  readonly attemptCount: number;
  /** The last status outside 2xx a server answered; what a summary must not hide. */
  readonly lastNon2xxStatus: number | undefined;
  readonly totalSleptMs: number;
  /** NaN when the first attempt was not timed (`timings: false`). */
  readonly startedAt: number;
  /** NaN when the loop ended on a first attempt that was not timed (`timings: false`). */
  readonly endedAt: number;
  /** The shared retry budget's balance when the loop ended, when one was used. */
  readonly retryBudgetBalance: number | undefined;
}

/** Thrown when a retry loop gives up. Carries the report, and the last value the operation returned. */
export class RetryError extends OncelyError {
  readonly report: RetryReport;
  readonly lastValue: unknown;

  constructor(report: RetryReport, lastValue: unknown, cause?: unknown) {
    super(
      `retry_${report.stopReason}`,
      summarizeReport(report),
      cause === undefined ? undefined : { cause },
    );
    this.name = 'RetryError';
    this.report = report;
    this.lastValue = lastValue;
  }
}

export function isRetryError(value: unknown): value is RetryError {
  return isOncelyError(value) && value.code.startsWith('retry_') && 'report' in value;
}

/** True when no attempt's request left (every one refused, unresolved, unreachable): nothing happened. */
export function wasNeverSent(report: RetryReport): boolean {
  return report.attempts.length > 0 && report.attempts.every((a) => a.transport?.sent === false);
}

/** One line: outcome, reason, attempts, last non-2xx status, attempts without a response, time slept. */
export function summarizeReport(report: RetryReport): string {
  const attempts = `${report.attemptCount} attempt${report.attemptCount === 1 ? '' : 's'}`;
  const last =
    report.lastNon2xxStatus === undefined ? '' : `, last non-2xx status ${report.lastNon2xxStatus}`;
  const failures = new Map<string, number>();
  for (const a of report.attempts) {
    if (a.transport !== undefined) {
      const text = describeTransportFailure(a.transport);
      failures.set(text, (failures.get(text) ?? 0) + 1);
    }
  }
  const wire = [...failures].map(([text, n]) => `, ${n} ${text}`).join('');
  return `${report.outcome} (stop:${report.stopReason}) after ${attempts}${last}${wire}, slept ${report.totalSleptMs} ms`;
}
