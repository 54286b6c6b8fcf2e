import type { BatchFiles } from '@oncely/cli/sim/batch-summary.js';
import type { ClaimResult, FigureComparison, MeansRow } from '@oncely/cli/sim/index.js';

/** Messages between the page and web/src/batch-worker.ts. */
export interface BatchRequest {
  readonly type: 'run';
  /** Worlds per setting: seeds 0 … seeds − 1, as `oncely sim batch --seeds`. */
  readonly seeds: number;
}

export type BatchReply =
  | { readonly type: 'progress'; readonly done: number; readonly total: number }
  | {
      readonly type: 'done';
      readonly seeds: number;
      readonly worlds: number;
      readonly outcomeCount: number;
      readonly means: readonly MeansRow[];
      readonly comparison: readonly FigureComparison[];
      readonly claims: readonly ClaimResult[];
      readonly files: BatchFiles;
      readonly elapsedMs: number;
    }
  | { readonly type: 'error'; readonly message: string };

/** The page's limit on worlds per setting (64 is the simulator write-up's batch (docs/origins.md); 4,096 takes a few seconds). */
export const MAX_BATCH_SEEDS = 4096;
