import { InvalidOptionError } from '../contract/errors.js';
import type { ResponseProblem } from './http-retry-error.js';
import type { HttpRetryError } from './http-retry-error.js';
import type { RetryReport } from './retry-report.js';

/**
 * When `client.request()` rejects: `'give-up'` (the default) rejects with an HttpRetryError
 * whenever the intent ends without a 2xx; `'never'` resolves with a {@link SettledClientResult}
 * however it ends, so a refusal is a value to branch on. Bad options reject under both.
 */
export const THROW_ON = ['give-up', 'never'] as const;
export type ThrowOn = (typeof THROW_ON)[number];

/** The result of `request()` on a client with `throwOn: 'never'`: every ending, told apart by `ok`. */
export type SettledClientResult =
  | {
      /** The intent ended in a 2xx. */
      readonly ok: true;
      /** The 2xx, its body still readable. */
      readonly response: Response;
      readonly report: RetryReport;
      readonly problem: undefined;
    }
  | {
      /** The intent ended without a 2xx: `report.stopReason` says why, `report.outcome` whether the work may have happened. */
      readonly ok: false;
      /** The last attempt's response, its body still readable; undefined when it got none (not sent, or no answer). */
      readonly response: Response | undefined;
      readonly report: RetryReport;
      /** The response's problem+json body, parsed, when it has one. */
      readonly problem: ResponseProblem | undefined;
    };

/** What a successful `request()` resolves with under the default `throwOn: 'give-up'`. */
export interface ClientResult {
  /** The final response, its body already read once within the attempt's timeout and still readable. */
  readonly response: Response;
  readonly report: RetryReport;
}

/** What `request()` resolves with on a client whose `throwOn` is `T`. */
export type ClientResultFor<T extends ThrowOn> = T extends 'never'
  ? SettledClientResult
  : ClientResult;

export function checkThrowOn(value: unknown): ThrowOn {
  if (!(THROW_ON as readonly unknown[]).includes(value)) {
    throw new InvalidOptionError('throwOn', value, `one of ${THROW_ON.join(', ')}`);
  }
  return value as ThrowOn;
}

/** A give-up as a settled result. */
export function settledFailure(error: HttpRetryError): SettledClientResult {
  return { ok: false, response: error.response, report: error.report, problem: error.problem };
}
