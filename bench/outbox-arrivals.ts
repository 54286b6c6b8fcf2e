import { monotonicMs, type ArrivalReply } from './outbox-protocol.js';

/**
 * Which keys arrived, when first and how often: the receiver's record of deliveries (and a
 * no-op worker's of the jobs it ran). Keys are `set.phase.n`: a prefix (up to the last dot) is a
 * set of intents whose count the harness waits for.
 */
export class Arrivals {
  readonly #seen = new Map<string, { readonly firstAtMs: number; count: number }>();
  readonly #distinct = new Map<string, number>();
  readonly #waits = new Map<string, number>();
  readonly #reply: (reply: ArrivalReply) => void;

  constructor(reply: (reply: ArrivalReply) => void) {
    this.#reply = reply;
  }

  arrived(key: string, atMs: number): void {
    const entry = this.#seen.get(key);
    if (entry) {
      entry.count++;
      return;
    }
    this.#seen.set(key, { firstAtMs: atMs, count: 1 });
    const prefix = key.slice(0, key.lastIndexOf('.') + 1);
    const distinct = (this.#distinct.get(prefix) ?? 0) + 1;
    this.#distinct.set(prefix, distinct);
    if (this.#waits.get(prefix) === distinct) {
      this.#waits.delete(prefix);
      this.#reply({ type: 'reached', prefix, atMs });
    }
  }

  /** Replies `reached` once `count` distinct keys of `prefix` arrived (at once if they have). */
  expect(prefix: string, count: number): void {
    if ((this.#distinct.get(prefix) ?? 0) >= count)
      this.#reply({ type: 'reached', prefix, atMs: monotonicMs() });
    else this.#waits.set(prefix, count);
  }

  report(prefix: string): void {
    const arrivals: [string, number, number][] = [];
    for (const [key, entry] of this.#seen)
      if (key.startsWith(prefix)) arrivals.push([key, entry.firstAtMs, entry.count]);
    this.#reply({ type: 'report', prefix, arrivals });
  }
}
