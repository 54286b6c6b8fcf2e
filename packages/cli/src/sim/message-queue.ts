/**
 * Messages in flight: `slots` singly linked lists of (job, attempt) pairs, each appended at its
 * tail so it keeps send order. Taking a slot's list empties the slot; the taken messages stay
 * readable (ids only grow within a world, so nothing is reused while being read). Plain arrays:
 * a world sends a few dozen messages and is then dropped whole.
 */
export class MessageQueue {
  readonly #jobs: number[] = [];
  readonly #attempts: number[] = [];
  readonly #next: number[] = [];
  readonly #heads: number[];
  readonly #tails: number[];

  constructor(slots: number) {
    this.#heads = new Array<number>(slots).fill(-1);
    this.#tails = new Array<number>(slots).fill(-1);
  }

  push(slot: number, job: number, attempt: number): void {
    const id = this.#jobs.length;
    this.#jobs.push(job);
    this.#attempts.push(attempt);
    this.#next.push(-1);
    const tail = this.#tails[slot]!;
    if (tail < 0) this.#heads[slot] = id;
    else this.#next[tail] = id;
    this.#tails[slot] = id;
  }

  /** The first message of the slot (-1 if none), emptying the slot. */
  take(slot: number): number {
    const head = this.#heads[slot]!;
    this.#heads[slot] = -1;
    this.#tails[slot] = -1;
    return head;
  }

  next(id: number): number {
    return this.#next[id]!;
  }

  job(id: number): number {
    return this.#jobs[id]!;
  }

  attempt(id: number): number {
    return this.#attempts[id]!;
  }
}
