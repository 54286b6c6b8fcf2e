import type { Decision, FinalOutcome, Observation, StopReason } from '../policy/decide.js';
import type { AttemptRecord, RetryReport } from './retry-report.js';

/** One attempt as observed, kept raw: its record is built only when someone asks for it. */
export interface RawAttempt {
  readonly attempt: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly observation: Observation;
  readonly decision: Decision;
}

/**
 * The attempts of one retry loop. Records and the report are built lazily: a call that succeeds
 * first time and whose report nobody reads costs one small object, not a report.
 */
export class AttemptLog {
  // Most loops make one attempt: it is kept in a field, the rest in an array made on demand.
  #first: RawAttempt | undefined;
  #rest: RawAttempt[] | undefined;
  #records: AttemptRecord[] | undefined;
  #totalSleptMs = 0;

  readonly #key: string | undefined;
  readonly #startedAt: number;

  constructor(key: string | undefined, startedAt: number) {
    this.#key = key;
    this.#startedAt = startedAt;
  }

  /** Keeps an attempt; `onAttempt` (progress output) sees its record at once. */
  add(
    attempt: number,
    startedAt: number,
    endedAt: number,
    observation: Observation,
    decision: Decision,
    onAttempt: ((record: AttemptRecord) => void) | undefined,
  ): void {
    const raw = { attempt, startedAt, endedAt, observation, decision };
    if (this.#first === undefined) this.#first = raw;
    else (this.#rest ??= []).push(raw);
    this.#records = undefined;
    if (onAttempt !== undefined) onAttempt(attemptRecord(raw));
  }

  slept(ms: number): void {
    this.#totalSleptMs += ms;
  }

  records(): AttemptRecord[] {
    if (this.#records !== undefined) return this.#records;
    const raw = this.#first === undefined ? [] : [this.#first, ...(this.#rest ?? [])];
    return (this.#records = raw.map(attemptRecord));
  }

  /** `retryBudgetBalance` is read when the loop ends: a shared bucket moves on afterwards. */
  report(
    stopReason: StopReason,
    outcome: FinalOutcome,
    endedAt: number,
    retryBudgetBalance: number | undefined,
  ): RetryReport {
    const attempts = this.records();
    let lastNon2xxStatus: number | undefined;
    for (let i = attempts.length - 1; i >= 0 && lastNon2xxStatus === undefined; i--) {
      const status = attempts[i]!.status;
      if (status !== undefined && (status < 200 || status > 299)) lastNon2xxStatus = status;
    }
    return {
      key: this.#key,
      outcome,
      stopReason,
      attempts,
      attemptCount: attempts.length,
      lastNon2xxStatus,
      totalSleptMs: this.#totalSleptMs,
      startedAt: this.#startedAt,
      endedAt,
      retryBudgetBalance,
    };
  }
}

/** The record of an attempt; the wait is on it only when the loop went on to wait. */
export function attemptRecord({
  attempt,
  startedAt,
  endedAt,
  observation,
  decision,
}: RawAttempt): AttemptRecord {
  return {
    attempt,
    startedAt,
    endedAt,
    outcome: decision.attemptOutcome,
    ...(observation.kind === 'response' ? { status: observation.status } : {}),
    ...(observation.kind === 'unknown'
      ? { transport: { sent: true, reason: observation.reason ?? 'no_response' } }
      : {}),
    ...(observation.kind === 'not_sent'
      ? { transport: { sent: false, reason: observation.reason } }
      : {}),
    ...(observation.kind !== 'response' ? { detail: observation.detail } : {}),
    ...(decision.retryAfter.kind !== 'absent' ? { retryAfter: decision.retryAfter } : {}),
    ...(decision.action === 'retry'
      ? { delayMs: decision.delayMs, delayReason: decision.delayReason }
      : {}),
  };
}
