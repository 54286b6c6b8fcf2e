import type { Clock } from '../time/clock.js';
import type { StepStore } from './step-store.js';

/**
 * Deletes the steps whose key's retention ended, `batchRows` at a time, pausing `pauseMs`
 * between batches like the ledger's own sweep; stops between two batches when `signal` aborts.
 * Steps are read only while their key is in flight, so deleting them with the key's end loses
 * nothing a retry could still need. Returns how many it deleted.
 */
export async function sweepSteps(
  steps: StepStore<unknown>,
  clock: Clock,
  batchRows: number,
  pauseMs: number,
  signal?: AbortSignal,
): Promise<number> {
  const nowMs = clock.now();
  let deleted = 0;
  for (;;) {
    const n = await steps.sweep(nowMs, batchRows);
    deleted += n;
    if (n < batchRows || signal?.aborted === true) return deleted;
    await clock.sleep(pauseMs);
  }
}
