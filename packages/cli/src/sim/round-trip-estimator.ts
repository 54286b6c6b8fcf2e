/**
 * A retransmission timeout learned from observed round trips, after RFC 6298 §2:
 *   first sample R:  SRTT = R, RTTVAR = R / 2
 *   later samples:   RTTVAR = 3/4 RTTVAR + 1/4 |SRTT − R|;  SRTT = 7/8 SRTT + 1/8 R
 *   RTO = SRTT + max(G, 4 · RTTVAR), G = one tick (the clock granularity),
 * rounded up to a whole tick and kept within [1, maxTicks]. Before any sample the timeout is the
 * configured retry-after (RFC 6298 starts from a fixed 1 s the same way).
 *
 * The caller feeds only unambiguous samples (Karn's rule): a receipt for a job sent exactly once.
 * After a retry a receipt cannot say which send it answers.
 */
export class RoundTripEstimator {
  readonly #maxTicks: number;
  #smoothed = 0;
  #variation = 0;
  #samples = 0;
  #timeoutTicks: number;

  constructor(initialTicks: number, maxTicks: number) {
    this.#maxTicks = maxTicks;
    this.#timeoutTicks = Math.min(initialTicks, maxTicks);
  }

  /** The current timeout, in whole ticks. */
  get timeoutTicks(): number {
    return this.#timeoutTicks;
  }

  get samples(): number {
    return this.#samples;
  }

  /** Feeds one round trip, in ticks. */
  observe(roundTripTicks: number): void {
    if (this.#samples === 0) {
      this.#smoothed = roundTripTicks;
      this.#variation = roundTripTicks / 2;
    } else {
      this.#variation = 0.75 * this.#variation + 0.25 * Math.abs(this.#smoothed - roundTripTicks);
      this.#smoothed = 0.875 * this.#smoothed + 0.125 * roundTripTicks;
    }
    this.#samples++;
    const raw = this.#smoothed + Math.max(1, 4 * this.#variation);
    this.#timeoutTicks = Math.min(this.#maxTicks, Math.max(1, Math.ceil(raw)));
  }
}
