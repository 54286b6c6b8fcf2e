import { abortReason, type Clock } from './clock.js';

interface PendingSleep {
  readonly wakeAt: number;
  readonly order: number;
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

  /** Sleeps not yet woken. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const duration = Math.max(0, ms);
    this.sleeps.push(duration);
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.#autoAdvance) {
      this.#now += duration;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: PendingSleep = {
        wakeAt: this.#now + duration,
        order: this.#order++,
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

  /** Moves time to `instant`, waking sleeps due by then one by one and letting each continue. */
  async advanceTo(instant: number): Promise<void> {
    for (;;) {
      const next = this.#nextDue(instant);
      if (!next) break;
      this.#pending = this.#pending.filter((p) => p !== next);
      this.#now = Math.max(this.#now, next.wakeAt);
      next.resolve();
      await flushMicrotasks();
    }
    this.#now = Math.max(this.#now, instant);
    await flushMicrotasks();
  }

  /** Wakes every pending sleep (and any taken while waking), however far away. */
  async runAll(): Promise<void> {
    while (this.#pending.length > 0) {
      const last = Math.max(...this.#pending.map((p) => p.wakeAt));
      await this.advanceTo(last);
    }
  }

  #nextDue(instant: number): PendingSleep | undefined {
    let best: PendingSleep | undefined;
    for (const p of this.#pending) {
      if (p.wakeAt > instant) continue;
      if (!best || p.wakeAt < best.wakeAt || (p.wakeAt === best.wakeAt && p.order < best.order)) best = p;
    }
    return best;
  }
}

/** Lets promise chains that were just resolved run before time moves again. */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
