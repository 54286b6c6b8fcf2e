import type { Clock } from '../time/clock.js';
import type { EntryVersion } from './ledger-entry.js';
import type { LedgerStore } from './ledger-store.js';

/** Why the beat stops: nothing is held any more. Never seen outside this file. */
const IDLE = Symbol('nothing held');

/**
 * Renews the lease of every claim whose effect is running, every heartbeatMs, on one timer for
 * the whole ledger rather than one per request: a live slow effect is never taken over, and a
 * killed owner's key is free one lease after its last beat. A claim held now is renewed within
 * heartbeatMs (at the next beat, which may come sooner), then every heartbeatMs. A renewal the
 * store refuses means the key is someone else's now: that claim is dropped, and its receipt
 * write will fail and roll its effect back. The timer runs only while something is held.
 */
export class LeaseHeartbeat {
  readonly #held = new Set<EntryVersion>();
  readonly #store: LedgerStore<unknown>;
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #leaseMs: number;
  #beating: AbortController | undefined;

  constructor(store: LedgerStore<unknown>, clock: Clock, heartbeatMs: number, leaseMs: number) {
    this.#store = store;
    this.#clock = clock;
    this.#heartbeatMs = heartbeatMs;
    this.#leaseMs = leaseMs;
  }

  /** Renews `version` until the returned function is called. */
  hold(version: EntryVersion): () => void {
    this.#held.add(version);
    this.#beating ??= this.#beat();
    return () => {
      this.#held.delete(version);
      if (this.#held.size > 0 || this.#beating === undefined) return;
      // With a reason of its own: abort() would build a DOMException (a stack trace).
      this.#beating.abort(IDLE);
      this.#beating = undefined;
    };
  }

  #beat(): AbortController {
    const stop = new AbortController();
    const clock = this.#clock;
    const sleep = clock.sleepInBackground
      ? clock.sleepInBackground.bind(clock)
      : clock.sleep.bind(clock);
    void (async () => {
      for (;;) {
        try {
          await sleep(this.#heartbeatMs, stop.signal);
        } catch {
          return; // stopped
        }
        if (stop.signal.aborted) return;
        const leaseExpiresAt = clock.now() + this.#leaseMs;
        await Promise.all(
          [...this.#held].map(async (version) => {
            // A store that is down misses a beat; the next one tries again before the lease runs out.
            const renewed = await this.#store.renew(version, leaseExpiresAt).catch(() => true);
            if (!renewed) this.#held.delete(version);
          }),
        );
      }
    })();
    return stop;
  }
}
