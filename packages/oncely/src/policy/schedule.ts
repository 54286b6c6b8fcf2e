import type { Random } from '../time/random.js';
import type { Jitter } from './backoff.js';

/**
 * How far jitter lengthens a step of a fixed schedule, as a fraction of it: a 5 min step waits
 * between 5 and 5.5 min. Never shortens it: a schedule's steps are what the receiver's operator
 * is told ("retried after 5 minutes"), so a retry never comes before its step. Spread enough that
 * messages failing together (an outage) come back over minutes rather than in one burst.
 */
export const SCHEDULE_JITTER_RATIO = 0.1;

/** The jitter forms a schedule takes: exact steps, or each lengthened by up to 10 %. */
export const SCHEDULE_JITTERS: readonly Jitter[] = ['none', 'full'];

/**
 * The delay before retry number `retry` (1 for the first) on a fixed schedule of steps in ms
 * (Svix's 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: docs.svix.com/retries). Past the schedule's
 * end its last step repeats, so an attempt limit beyond it keeps a known rhythm. Jitter `full`
 * lengthens the step by up to {@link SCHEDULE_JITTER_RATIO}, never past `maxDelayMs`.
 */
export function scheduledDelayMs(
  retry: number,
  schedule: readonly number[],
  jitter: Jitter,
  maxDelayMs: number,
  random: Random,
): number {
  const step = schedule[Math.min(Math.max(retry, 1), schedule.length) - 1] ?? 0;
  if (jitter === 'none' || step === 0) return step;
  return Math.min(maxDelayMs, Math.floor(step * (1 + random.next() * SCHEDULE_JITTER_RATIO)));
}
