import type { Clock } from '../time/clock.js';
import { afterThisTurn } from '../time/next-turn.js';

interface Watched {
  readonly at: number;
  readonly expire: () => void;
}

/** Ends sends that run past their limit: one timer for every send in flight, not one each. */
export interface DeadlineSweep {
  /** Calls `expire` once `limitMs` have passed on the timer, unless the returned function runs first. */
  watch(limitMs: number, expire: () => void): () => void;
}

/**
 * The outbox worker's attempt timeouts. A batch sends its intents together with the same limit,
 * so one sleep on `timer`, armed for the earliest limit, serves all of them: at each wake-up the
 * sends past their limit are expired and the sleep is armed for the next. Per send that is a set
 * entry, where a timer, two AbortControllers and their listeners each cost more (the profile of a
 * 32-intent batch put signals and timers at 8 % of the worker). The sleep is cancelled whenever
 * nothing is in flight, so an idle worker holds no timer and does not keep the process alive.
 */
export function createDeadlineSweep(timer: Clock): DeadlineSweep {
  const watched = new Set<Watched>();
  let armed: { readonly at: number; readonly stop: AbortController } | undefined;

  const disarm = (): void => {
    armed?.stop.abort();
    armed = undefined;
  };
  const arm = (at: number): void => {
    if (armed !== undefined && armed.at <= at) return;
    disarm();
    const stop = new AbortController();
    armed = { at, stop };
    timer.sleep(Math.max(0, at - timer.now()), stop.signal).then(
      () => {
        if (armed?.stop === stop) armed = undefined;
        sweep();
      },
      () => undefined,
    );
  };
  const sweep = (): void => {
    const now = timer.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of watched) {
      if (entry.at <= now) {
        watched.delete(entry);
        entry.expire();
      } else if (entry.at < next) next = entry.at;
    }
    if (next !== Number.POSITIVE_INFINITY) arm(next);
  };

  // The sleep is armed on the next turn of the event loop, not at once: sends answered within
  // the turn (a `deliver` hook's, say) come and go without a timer, an AbortController and its
  // abort each. A limit counts from its watch either way.
  let wantAt = Number.POSITIVE_INFINITY;
  const armLater = (): void => {
    const at = wantAt;
    wantAt = Number.POSITIVE_INFINITY;
    if (watched.size > 0) arm(at);
  };
  return {
    watch(limitMs, expire) {
      const entry: Watched = { at: timer.now() + limitMs, expire };
      watched.add(entry);
      if (armed === undefined || armed.at > entry.at) {
        if (wantAt === Number.POSITIVE_INFINITY) afterThisTurn(armLater);
        wantAt = Math.min(wantAt, entry.at);
      }
      return () => {
        watched.delete(entry);
        if (watched.size === 0) disarm();
      };
    },
  };
}
