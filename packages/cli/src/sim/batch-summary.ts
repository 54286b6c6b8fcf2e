import { BATCH_SETTINGS, type BatchSetting } from './batch-settings.js';
import { checkClaims, type ClaimResult } from './claims.js';
import { closedFormCheck, type ClosedFormResult } from './closed-form.js';
import { meansToCsv, outcomesToCsv, outcomesToJsonLines } from './outcome-csv.js';
import type { BatchResult } from './run-batch.js';
import { compareWithPublished, type FigureComparison } from './published-figures.js';

/** What a batch shows: `summary.json` of `oncely sim batch --out`, and the page's batch panel. */
export interface BatchSummary
  extends Pick<BatchResult, 'seeds' | 'firstSeed' | 'rules' | 'worlds' | 'means'> {
  /** The settings themselves, not only their ids. */
  readonly settings: readonly BatchSetting[];
  /** How many outcomes the batch had (its outcomeCount). */
  readonly outcomes: number;
  /** The simulator write-up's published means beside ours (docs/origins.md). */
  readonly published: readonly FigureComparison[];
  readonly closedForm: ClosedFormResult;
  readonly claims: readonly ClaimResult[];
}

/**
 * Judges a batch: the simulator write-up's figures beside its means (docs/origins.md), the closed-form check (2,000 small
 * worlds), and the simulator write-up's claims with it (docs/origins.md). The CLI and the page's worker both summarize here, so
 * their summary.json files are the same.
 */
export function summarizeBatch(result: BatchResult): BatchSummary {
  const closedForm = closedFormCheck();
  return {
    seeds: result.seeds,
    firstSeed: result.firstSeed,
    settings: BATCH_SETTINGS,
    rules: result.rules,
    worlds: result.worlds,
    outcomes: result.outcomeCount,
    means: result.means,
    published: compareWithPublished(result.means),
    closedForm,
    claims: checkClaims(result.means, { closedForm }),
  };
}

/** The files of `oncely sim batch --out` and of the page's downloads, in the order they are written. */
export const BATCH_FILE_NAMES = [
  'outcomes.jsonl',
  'outcomes.csv',
  'means.csv',
  'summary.json',
] as const;
export type BatchFileName = (typeof BATCH_FILE_NAMES)[number];
export type BatchFiles = { readonly [name in BatchFileName]: string };

/** Every file of a batch as text (the outcomes need `keepOutcomes`, runBatch's default). */
export function batchFiles(result: BatchResult, summary: BatchSummary): BatchFiles {
  return {
    'outcomes.jsonl': outcomesToJsonLines(result.outcomes),
    'outcomes.csv': outcomesToCsv(result.outcomes),
    'means.csv': meansToCsv(result.means),
    'summary.json': `${JSON.stringify(summary, null, 2)}\n`,
  };
}
