import type { Clock } from '../time/clock.js';
import { afterThisTurn } from '../time/next-turn.js';

/**
 * What a worker waits on between passes: the clock, or a wake from its journal, whichever comes
 * first. A wake that comes while a pass runs is kept, so the next wait ends at once: the intent it
 * announced may have committed after the pass had looked.
 */
export interface WakeLatch {
  /** Called by the journal's watch: an intent may be due now. */
  wake(): void;
  /**
   * Sleeps `ms` on the clock, less if woken (or woken since the last wait). Rejects only when
   * `signal` aborts; a wake resolves.
   */
  sleep(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void>;
}

/** Why an ended sleep's timer is cancelled: a reason given, so the abort makes no DOMException. */
const CANCELLED = Object.freeze({ reason: 'the sleep ended first' });

/**
 * A wake resolves the sleep at once and cancels its timer on the next turn of the event loop: an
 * abort dispatches an event, which cost a cold process about 0.1 ms, and in front of the pass the
 * wake starts (claim, send) it would be paid before the intent leaves.
 */
export function createWakeLatch(): WakeLatch {
  let woken = false;
  let waker: (() => void) | undefined;
  return {
    wake() {
      woken = true;
      waker?.();
    },
    sleep(clock, ms, signal) {
      if (woken) {
        woken = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        const timer = new AbortController();
        const end = (): void => {
          waker = undefined;
          woken = false;
          signal?.removeEventListener('abort', stop);
        };
        const stop = (): void => {
          end();
          timer.abort(CANCELLED);
          reject(signal!.reason);
        };
        waker = () => {
          end();
          resolve();
          afterThisTurn(() => timer.abort(CANCELLED));
        };
        if (signal?.aborted) return stop();
        signal?.addEventListener('abort', stop, { once: true });
        clock.sleep(ms, timer.signal).then(
          () => {
            end();
            resolve();
          },
          () => undefined, // cancelled by a wake or a stop, which settled this sleep
        );
      });
    },
  };
}
