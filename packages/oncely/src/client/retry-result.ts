import type { Decision, Observation } from '../policy/decide.js';
import { AttemptLog } from './attempt-log.js';
import type { RetryReport } from './retry-report.js';

export interface RetryResult<T> {
  readonly value: T;
  readonly report: RetryReport;
}

/*
 * A success's report is built only when someone reads it: the common path never does. Two
 * classes, no shared base: a derived constructor is a measurable part of a first success's cost.
 */

/** A loop that succeeded on its first attempt: that attempt as observed, kept flat (one object). */
export class FirstAttemptSuccess<T> implements RetryResult<T> {
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
export class LoggedSuccess<T> implements RetryResult<T> {
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
