import type { Clock } from '../time/clock.js';

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

export function createWakeLatch(): WakeLatch {
  let woken = false;
  let waker: AbortController | undefined;
  return {
    wake() {
      woken = true;
      waker?.abort();
    },
    async sleep(clock, ms, signal) {
      if (woken) {
        woken = false;
        return;
      }
      const controller = new AbortController();
      waker = controller;
      const stop = (): void => controller.abort();
      signal?.addEventListener('abort', stop, { once: true });
      try {
        await clock.sleep(ms, controller.signal);
      } catch (error) {
        if (signal?.aborted) throw error; // stopped, not woken
      } finally {
        signal?.removeEventListener('abort', stop);
        waker = undefined;
        woken = false;
      }
    },
  };
}
