import type { Clock } from '../time/clock.js';
import type { EntryVersion } from './ledger-entry.js';
import type { LedgerStore } from './ledger-store.js';

/**
 * Renews the lease of every claim whose effect is running, every heartbeatMs, on one timer for
 * the whole ledger rather than one per request: a live slow effect is never taken over, and a
 * killed owner's key is free one lease after its last beat. A claim held now is renewed within
 * heartbeatMs (at the next beat, which may come sooner), then every heartbeatMs. A renewal the
 * store refuses means the key is someone else's now: that claim is dropped, and its receipt
 * write will fail and roll its effect back.
 *
 * The timer is not stopped when the last claim is released: the beat that finds nothing held
 * ends it. Stopping it there cost about 30 µs of CPU (an AbortController, its abort event, a
 * cleared timer, a new loop), paid each time a ledger under load went idle between two batches:
 * most keyed requests. An idle ledger keeps at most one background timer, which never keeps the
 * process alive (Clock.sleepInBackground).
 */
export class LeaseHeartbeat {
  readonly #held = new Set<EntryVersion>();
  readonly #store: LedgerStore<unknown>;
  readonly #clock: Clock;
  readonly #heartbeatMs: number;
  readonly #leaseMs: number;
  #beating: Promise<void> | undefined;

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
    return () => void this.#held.delete(version);
  }

  async #beat(): Promise<void> {
    const clock = this.#clock;
    for (;;) {
      await (clock.sleepInBackground ?? clock.sleep).call(clock, this.#heartbeatMs);
      if (this.#held.size === 0) {
        this.#beating = undefined;
        return;
      }
      const leaseExpiresAt = clock.now() + this.#leaseMs;
      await Promise.all(
        [...this.#held].map(async (version) => {
          // A store that is down misses a beat; the next one tries again before the lease runs out.
          const renewed = await this.#store.renew(version, leaseExpiresAt).catch(() => true);
          if (!renewed) this.#held.delete(version);
        }),
      );
    }
  }
}
