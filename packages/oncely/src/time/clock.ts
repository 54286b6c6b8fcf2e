/**
 * A source of time. Everything that waits or reads the time takes a Clock, so tests can drive
 * time with a {@link VirtualClock} instead of sleeping for real.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. When `signal` aborts first, rejects with the signal's
   * reason and cancels the pending timer.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Like sleep, for background timers (a lease heartbeat) that must never move a VirtualClock by
   * themselves: they wake only when something else moves time. Without it, `sleep` is used.
   */
  sleepInBackground?(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Rejection used when a sleep is cancelled by an AbortSignal without a reason of its own. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * The longest delay one `setTimeout` can hold (2^31 - 1 ms, about 24.8 days). Node and browsers
 * turn anything longer into 1 ms, which would retry at once instead of waiting; we chain timers.
 */
const MAX_TIMER_MS = 2_147_483_647;

/** The real clock: `Date.now()` and `setTimeout`. The only place real time is read. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleepFor(ms, signal, false),
  // A background timer never keeps the process alive: what it serves keeps it alive, if anything.
  sleepInBackground: (ms, signal) => sleepFor(ms, signal, true),
};

function sleepFor(ms: number, signal: AbortSignal | undefined, background: boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    // NaN would become a 1 ms timer; treat it as no wait, like a negative duration.
    let remainingMs = Number.isNaN(ms) ? 0 : Math.max(0, ms);
    // A zero wait skips the timer queue, which would stretch it to about 1 ms in Node.
    if (remainingMs === 0) {
      resolve();
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const arm = (): void => {
      const stepMs = Math.min(remainingMs, MAX_TIMER_MS);
      remainingMs -= stepMs;
      timer = setTimeout(() => {
        if (remainingMs > 0) {
          arm();
          return;
        }
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, stepMs);
      if (background) timer.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}
