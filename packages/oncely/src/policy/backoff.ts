import type { Random } from '../time/random.js';
import { scheduledDelayMs } from './schedule.js';

/**
 * Jitter spreads retries so that clients failing together do not come back together
 * (AWS Architecture Blog, "Exponential Backoff And Jitter").
 * - none: base * 2^(n-1), capped. A metronome: only for tests and demos.
 * - full: uniform in [0, that].
 * - equal: half fixed, half uniform.
 * - decorrelated: uniform in [base, 3 * previous], capped.
 */
export const JITTERS = ['none', 'full', 'equal', 'decorrelated'] as const;
export type Jitter = (typeof JITTERS)[number];

export interface BackoffOptions {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly jitter: Jitter;
  /** Fixed steps in ms in place of the exponential form (schedule.ts); null or absent for none. */
  readonly schedule?: readonly number[] | null | undefined;
}

/**
 * The delay before retry number `retry` (1 for the first retry). `previousDelayMs` feeds the
 * decorrelated form. Always in [0, maxDelayMs]; draws from `random` only when jitter needs it.
 */
export function backoffDelayMs(
  retry: number,
  options: BackoffOptions,
  random: Random,
  previousDelayMs = 0,
): number {
  const { baseDelayMs, maxDelayMs, jitter, schedule } = options;
  if (schedule != null && schedule.length > 0)
    return scheduledDelayMs(retry, schedule, jitter, maxDelayMs, random);
  // A zero base stays zero: 0 * 2^1024 would be 0 * Infinity = NaN after about a thousand retries.
  const exponential =
    baseDelayMs === 0 ? 0 : Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, retry - 1));
  switch (jitter) {
    case 'none':
      return exponential;
    case 'full':
      return Math.floor(random.next() * exponential);
    case 'equal':
      return Math.floor(exponential / 2 + random.next() * (exponential / 2));
    case 'decorrelated': {
      const upper = Math.max(baseDelayMs, 3 * (previousDelayMs || baseDelayMs));
      return Math.min(maxDelayMs, Math.floor(baseDelayMs + random.next() * (upper - baseDelayMs)));
    }
  }
}
