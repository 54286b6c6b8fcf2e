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
}

/** Rejection used when a sleep is cancelled by an AbortSignal without a reason of its own. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The real clock: `Date.now()` and `setTimeout`. The only place real time is read. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};
