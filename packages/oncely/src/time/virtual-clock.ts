import { abortReason, type Clock } from './clock.js';

interface PendingSleep {
  readonly wakeAt: number;
  readonly order: number;
  readonly background: boolean;
  readonly resolve: () => void;
}

export interface VirtualClockOptions {
  /** The starting instant, in ms since the epoch. @default 0 */
  readonly startAt?: number;
  /**
   * When true, every sleep moves time forward by its own duration and resolves at once, so a
   * single retry loop runs to the end without anyone calling `advance`. Use manual mode (false)
   * when several sleepers must interleave in a controlled order. @default true
   */
  readonly autoAdvance?: boolean;
}

/**
 * A clock whose time moves only when told. Sleeps wake in order of their wake-up instant (ties in
 * the order they were taken), so a test reads like a timeline, with no real waiting.
 */
export class VirtualClock implements Clock {
  #now: number;
  #order = 0;
  #pending: PendingSleep[] = [];
  readonly #autoAdvance: boolean;
  /** Every sleep ever requested, in ms, in order: lets tests assert on the waits taken. */
  readonly sleeps: number[] = [];

  constructor(options: VirtualClockOptions = {}) {
    this.#now = options.startAt ?? 0;
    this.#autoAdvance = options.autoAdvance ?? true;
  }

  now(): number {
    return this.#now;
  }

  /**
   * Sleeps not yet woken, background ones aside: what the work under test is waiting for. A lease
   * heartbeat may keep one background sleep after its last effect (it ends at its next beat).
   */
  get pendingCount(): number {
    let count = 0;
    for (const p of this.#pending) if (!p.background) count++;
    return count;
  }

  /** Background sleeps (sleepInBackground) not yet woken. */
  get backgroundCount(): number {
    return this.#pending.length - this.pendingCount;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    // NaN would poison the clock (every later instant NaN); treat it as no wait, as systemClock does.
    const duration = Number.isNaN(ms) ? 0 : Math.max(0, ms);
    this.sleeps.push(duration);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#autoAdvance) {
      this.#now += duration;
      return Promise.resolve();
    }
    return this.#queue(duration, signal, false);
  }

  /** A sleep that waits for `advance` even in auto mode, and is not recorded in `sleeps`. */
  sleepInBackground(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return this.#queue(Number.isNaN(ms) ? 0 : Math.max(0, ms), signal, true);
  }

  #queue(duration: number, signal: AbortSignal | undefined, background: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry: PendingSleep = {
        wakeAt: this.#now + duration,
        order: this.#order++,
        background,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.#pending = this.#pending.filter((p) => p !== entry);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.push(entry);
    });
  }

  /** Sets the time forward by `ms` (auto mode too), waking every sleep that falls due, in order. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.#now + ms);
  }

  /**
   * Moves time to `instant`, waking sleeps due by then one by one and letting each continue.
   * Work already under way (say a retry loop started just before this call, not yet asleep) runs
   * first, so its sleep is counted from the right instant instead of from `instant`.
   */
  async advanceTo(instant: number): Promise<void> {
    for (;;) {
      await settle();
      const next = this.#nextDue(instant);
      if (!next) break;
      this.#pending = this.#pending.filter((p) => p !== next);
      this.#now = Math.max(this.#now, next.wakeAt);
      next.resolve();
    }
    this.#now = Math.max(this.#now, instant);
    await settle();
  }

  /** Wakes every pending sleep (and any taken while waking), however far away. */
  async runAll(): Promise<void> {
    await settle();
    while (this.#pending.length > 0) {
      const last = Math.max(...this.#pending.map((p) => p.wakeAt));
      await this.advanceTo(last);
    }
  }

  #nextDue(instant: number): PendingSleep | undefined {
    let best: PendingSleep | undefined;
    for (const p of this.#pending) {
      if (p.wakeAt > instant) continue;
      if (!best || p.wakeAt < best.wakeAt || (p.wakeAt === best.wakeAt && p.order < best.order))
        best = p;
    }
    return best;
  }
}

/**
 * Lets every continuation that is ready run before time moves again. A fixed number of
 * `await Promise.resolve()` turns was not enough: an operation with a few nested awaits had not
 * reached its next sleep yet, so that sleep was taken after time had already jumped. Waiting for
 * the next macrotask drains the whole microtask queue, however deep the chain.
 */
function settle(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
