import { BATCH_SETTINGS, checkClaims, closedFormCheck, compareWithSeed002, runBatch } from '../../src/sim/index.js';
import { meansToCsv, outcomesToCsv, outcomesToJsonLines } from '../../src/sim/outcome-csv.js';
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
        if (done % every === 0 || done === total) scope.postMessage({ type: 'progress', done, total });
      },
    });
    const comparison = compareWithSeed002(result.means);
    // The closed-form check (2,000 small worlds) completes the claims, as in the CLI's summary.
    const closedForm = closedFormCheck();
    const claims = checkClaims(result.means, { closedForm });
    const summary = {
      seeds: result.seeds,
      firstSeed: result.firstSeed,
      settings: BATCH_SETTINGS,
      rules: result.rules,
      worlds: result.worlds,
      outcomes: result.outcomeCount,
      means: result.means,
      seed002: comparison,
      closedForm,
      claims,
    };
    scope.postMessage({
      type: 'done',
      seeds: result.seeds,
      worlds: result.worlds,
      outcomeCount: result.outcomeCount,
      means: result.means,
      comparison,
      claims,
      files: {
        'outcomes.jsonl': outcomesToJsonLines(result.outcomes),
        'outcomes.csv': outcomesToCsv(result.outcomes),
        'means.csv': meansToCsv(result.means),
        'summary.json': `${JSON.stringify(summary, null, 2)}\n`,
      },
      elapsedMs: performance.now() - startedAt,
    });
  } catch (error) {
    scope.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
};
