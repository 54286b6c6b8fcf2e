import type { StepRecord } from '../../ledger/step-store.js';

/** The most steps one batch writes (8 parameters each: far below either dialect's limit). */
export const MAX_STEP_BATCH = 64;

interface Waiting {
  readonly step: StepRecord;
  resolve(won: boolean): void;
  reject(error: unknown): void;
}

/**
 * Steps that wrote nothing of their own, recorded together: those that arrive in one turn of the
 * event loop (after its I/O callbacks: the answers of one service to concurrent requests), and
 * then those that arrive while a write commits, go in one statement and one commit (as SQLite's
 * group commit gathers a turn's transactions). Writing the first at once instead split every
 * wave of concurrent steps in two commits. Each caller learns whether its own row went in.
 */
export class StepBatch {
  readonly #write: (steps: readonly StepRecord[]) => Promise<readonly boolean[]>;
  #waiting: Waiting[] = [];
  #writing = false;

  /** `write` records `steps` in one transaction, answering for each whether it went in. */
  constructor(write: (steps: readonly StepRecord[]) => Promise<readonly boolean[]>) {
    this.#write = write;
  }

  add(step: StepRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#waiting.push({ step, resolve, reject });
      if (this.#writing) return;
      this.#writing = true;
      setImmediate(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, MAX_STEP_BATCH);
      try {
        const won = await this.#write(batch.map((w) => w.step));
        batch.forEach((w, i) => w.resolve(won[i] === true));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    this.#writing = false;
  }
}

/**
 * Which of `steps` a multi-row INSERT … RETURNING wrote: each returned row marks the first step
 * with its key, so two rows for one place in a batch never both count as written.
 */
export function writtenOf(
  steps: readonly StepRecord[],
  returned: readonly { scope: string; idem_key: string; run_at: unknown; position: unknown }[],
): boolean[] {
  const won = steps.map(() => false);
  for (const row of returned) {
    const i = steps.findIndex(
      (s, j) =>
        !won[j] &&
        s.scope === row.scope &&
        s.key === row.idem_key &&
        s.runAt === Number(row.run_at) &&
        s.position === Number(row.position),
    );
    if (i >= 0) won[i] = true;
  }
  return won;
}
