import type { Observation } from '../policy/decide.js';
import { observeError } from './transport-error.js';

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
