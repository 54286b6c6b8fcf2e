import { BATCH_SETTINGS, runBatch } from '@oncely/cli/sim/index.js';
// Not re-exported by sim/index.ts: the page's first visit, which loads that index, never needs it.
import { batchFiles, summarizeBatch } from '@oncely/cli/sim/batch-summary.js';
import type { BatchReply, BatchRequest } from './batch-protocol.js';

/**
 * The batch, off the page's thread: the same runBatch and the same file writers as
 * `oncely sim batch --out`, with progress posted about a hundred times per run.
 */
interface WorkerScope {
  postMessage(message: BatchReply): void;
  onmessage: ((event: MessageEvent<BatchRequest>) => void) | null;
}
const scope = self as unknown as WorkerScope;

scope.onmessage = (event) => {
  const { seeds } = event.data;
  try {
    // The page checks seeds against MAX_BATCH_SEEDS; runBatch checks them again (InvalidOptionError).
    const startedAt = performance.now();
    const every = Math.max(1, Math.floor((seeds * BATCH_SETTINGS.length) / 100));
    const result = runBatch({
      seeds,
      onProgress: (done, total) => {
        if (done % every === 0 || done === total)
          scope.postMessage({ type: 'progress', done, total });
      },
    });
    // The CLI's very summary, its closed-form check (2,000 small worlds) and claims included.
    const summary = summarizeBatch(result);
    scope.postMessage({
      type: 'done',
      seeds: result.seeds,
      worlds: result.worlds,
      outcomeCount: result.outcomeCount,
      means: result.means,
      comparison: summary.published,
      claims: summary.claims,
      files: batchFiles(result, summary),
      elapsedMs: performance.now() - startedAt,
    });
  } catch (error) {
    scope.postMessage({
      type: 'error',
      message: error instanceof Error ? error.message : String(error),
    });
  }
};
