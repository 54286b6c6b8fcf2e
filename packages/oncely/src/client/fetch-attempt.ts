import type { Clock } from '../time/clock.js';

/** What every attempt of one request shares: the request as built once, and what bounds it. */
export interface FetchAttemptPlan {
  readonly fetch: typeof globalThis.fetch;
  readonly url: string | URL;
  /** fetch's options with the method and headers settled; each attempt adds its own signal. */
  readonly init: RequestInit;
  readonly timeoutMs: number;
  /** No attempt outlives it (ms since the epoch on `clock`). */
  readonly deadlineAt: number;
  /** Reads the time left before the deadline. */
  readonly clock: Clock;
  /** Times each attempt out: real I/O, so kept apart from `clock` (see ClientOptions.timer). */
  readonly timer: Clock;
  /** The caller's signal: aborting it cuts the attempt in flight. */
  readonly signal: AbortSignal | undefined;
}

/**
 * One attempt of a request: a fetch that ends by the attempt timeout, the deadline or the caller's
 * abort, whichever comes first, with the body read inside that limit.
 */
export function fetchAttempt(plan: FetchAttemptPlan): () => Promise<Response> {
  const { clock, timer, signal: outer } = plan;
  return async () => {
    // The per-attempt timeout never outlives the deadline: an attempt still running at the
    // deadline is cut there and counts as unknown.
    const limitMs = Math.max(1, Math.min(plan.timeoutMs, plan.deadlineAt - clock.now()));
    const controller = new AbortController();
    const stopTimer = new AbortController();
    const onOuterAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) onOuterAbort();
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    timer.sleep(limitMs, stopTimer.signal).then(
      () =>
        controller.abort(new DOMException(`attempt timed out after ${limitMs} ms`, 'TimeoutError')),
      () => undefined,
    );
    try {
      return await untilAborted(controller.signal, async () => {
        const response = await plan.fetch(plan.url, { ...plan.init, signal: controller.signal });
        // Read the body inside the timeout: a reply cut mid-body is a lost ack (unknown), not
        // a success. The clone keeps the returned response readable.
        await response.clone().arrayBuffer();
        return response;
      });
    } finally {
      stopTimer.abort();
      outer?.removeEventListener('abort', onOuterAbort);
    }
  };
}

/** Rejects with the signal's reason as soon as it aborts, even if `work` ignores the signal. */
function untilAborted<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    work()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}
