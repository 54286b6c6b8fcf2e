/**
 * One shard of bench/sim.ts's parallel batch: runs the ten settings over a range of seeds and
 * posts back the outcome count and the means (the outcomes themselves stay here).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runBatch } from '#cli/sim/index.js';

export interface ShardRequest {
  readonly firstSeed: number;
  readonly seeds: number;
}

const { firstSeed, seeds } = workerData as ShardRequest;
const result = runBatch({ firstSeed, seeds, keepOutcomes: false });
parentPort?.postMessage({ outcomeCount: result.outcomeCount, means: result.means });
