/**
 * One-at-a-time execution of async sections, in arrival order. A store with a single connection
 * (better-sqlite3) runs every statement through one of these, so an async effect that awaits in
 * the middle of its transaction can never have another request's statements join it.
 */
export class AsyncMutex {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;

  /** Sections queued or running. */
  get pending(): number {
    return this.#waiting;
  }

  /** Runs `section` once every section queued before it has settled; settles as it does. */
  async run<T>(section: () => T | Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#waiting++;
    try {
      await previous;
      return await section();
    } finally {
      this.#waiting--;
      release();
    }
  }
}
