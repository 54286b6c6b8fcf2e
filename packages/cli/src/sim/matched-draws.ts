import { seededRandom } from 'oncely/policy';

/**
 * The random facts of one world, matched across rules: attempt `a` of job `j` draws from its own
 * stream seeded by (seed, j, a), always in the same order (request lost?, forward delay,
 * receipt lost?, return delay), whether or not a fact ends up used. So two rules that both send
 * attempt 2 of job 5 see the same fate for it, whatever else they did (docs/origins.md, "The retry-rule simulator": "matched world
 * draws per job and attempt").
 *
 * Draws are made on first use and cached, so one instance shared by every rule of a world costs
 * one stream per (job, attempt) actually sent by any of them.
 */
export class MatchedDraws {
  readonly #seed: number;
  readonly #requestLoss: number;
  readonly #receiptLoss: number;
  readonly #maxDelayTicks: number;
  /** Per job, four numbers per attempt: request lost (0/1), forward delay, receipt lost (0/1), return delay. */
  readonly #byJob: number[][];

  constructor(
    seed: number,
    jobs: number,
    requestLoss: number,
    receiptLoss: number,
    maxDelayTicks: number,
  ) {
    this.#seed = seed;
    this.#requestLoss = requestLoss;
    this.#receiptLoss = receiptLoss;
    this.#maxDelayTicks = maxDelayTicks;
    this.#byJob = Array.from({ length: jobs }, () => []);
  }

  /** Whether this world was drawn for these channel parameters (a cache may be reused only then). */
  matches(
    seed: number,
    jobs: number,
    requestLoss: number,
    receiptLoss: number,
    maxDelayTicks: number,
  ): boolean {
    return (
      seed === this.#seed &&
      jobs === this.#byJob.length &&
      requestLoss === this.#requestLoss &&
      receiptLoss === this.#receiptLoss &&
      maxDelayTicks === this.#maxDelayTicks
    );
  }

  requestLost(job: number, attempt: number): boolean {
    return this.#fact(job, attempt, 0) === 1;
  }

  forwardDelayTicks(job: number, attempt: number): number {
    return this.#fact(job, attempt, 1);
  }

  receiptLost(job: number, attempt: number): boolean {
    return this.#fact(job, attempt, 2) === 1;
  }

  returnDelayTicks(job: number, attempt: number): number {
    return this.#fact(job, attempt, 3);
  }

  #fact(job: number, attempt: number, index: number): number {
    const facts = this.#byJob[job]!;
    const at = (attempt - 1) * 4;
    while (facts.length <= at) this.#draw(job, facts);
    return facts[at + index]!;
  }

  #draw(job: number, facts: number[]): void {
    const attempt = facts.length / 4 + 1;
    const random = seededRandom(this.#seed, job, attempt);
    // `u < p` makes a loss of 0 never happen and a loss of 1 always happen.
    facts.push(
      random.next() < this.#requestLoss ? 1 : 0,
      random.int(1, this.#maxDelayTicks),
      random.next() < this.#receiptLoss ? 1 : 0,
      random.int(1, this.#maxDelayTicks),
    );
  }
}
