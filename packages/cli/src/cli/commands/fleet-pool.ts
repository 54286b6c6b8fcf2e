import { Worker } from 'node:worker_threads';
import { InvalidOptionError } from 'oncely';
import type { CellResult, FleetCell } from '../../sim/index.js';

export interface FleetPoolOptions {
  readonly seeds: number;
  readonly firstSeed?: number;
  /** Worker threads. @default 1 */
  readonly workers?: number;
  /** Called after each cell with cells done and cells in all. */
  readonly onProgress?: (done: number, total: number) => void;
}

const WORKER_URL = new URL('../fleet-worker.js', import.meta.url);

/**
 * Runs fleet cells on `workers` threads. Cells are handed out one at a time (a slow cell does
 * not hold the others back) and results are kept by cell index, so the output is in cell order
 * and identical for any number of workers.
 */
export async function runFleetPool(
  cells: readonly FleetCell[],
  options: FleetPoolOptions,
): Promise<CellResult[]> {
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new InvalidOptionError('--workers', workers, 'an integer from 1 to 64');
  const results: CellResult[] = new Array<CellResult>(cells.length);
  let next = 0;
  let done = 0;
  const threads = Array.from(
    { length: Math.min(workers, cells.length) },
    () => new Worker(WORKER_URL),
  );
  try {
    await Promise.all(
      threads.map(
        (thread) =>
          new Promise<void>((resolve, reject) => {
            const hand = (): void => {
              if (next >= cells.length) {
                thread.postMessage(null);
                resolve();
                return;
              }
              const index = next++;
              thread.postMessage({
                index,
                cell: cells[index],
                seeds: options.seeds,
                firstSeed: options.firstSeed ?? 0,
              });
            };
            thread.on(
              'message',
              (message: { index: number; result?: CellResult; error?: string }) => {
                if (message.error !== undefined) {
                  reject(new Error(`fleet cell ${message.index}: ${message.error}`));
                  return;
                }
                results[message.index] = message.result!;
                options.onProgress?.(++done, cells.length);
                hand();
              },
            );
            thread.on('error', reject);
            hand();
          }),
      ),
    );
  } finally {
    await Promise.all(threads.map((thread) => thread.terminate()));
  }
  return results;
}
