// A worker thread of `oncely sim fleet`: runs the cells the pool hands it, one at a time, and
// posts each result back. It holds no state between cells, so any split gives the same totals.
import { parentPort } from 'node:worker_threads';
import { runCell, type FleetCell } from '../sim/index.js';

interface CellJob {
  readonly index: number;
  readonly cell: FleetCell;
  readonly seeds: number;
  readonly firstSeed: number;
}

parentPort?.on('message', (job: CellJob | null) => {
  if (job === null) {
    parentPort?.close();
    return;
  }
  try {
    parentPort?.postMessage({
      index: job.index,
      result: runCell(job.cell, job.seeds, job.firstSeed),
    });
  } catch (error) {
    parentPort?.postMessage({
      index: job.index,
      error: error instanceof Error ? error.message : String(error),
    });
  }
});
