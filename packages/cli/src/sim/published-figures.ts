import type { BatchSettingId } from './batch-settings.js';
import { findRow, type MeansRow } from './means-table.js';
import type { RuleId } from './rules.js';
import type { MetricName } from './run-world.js';

/** One number published in the simulator write-up (docs/origins.md) (a mean over its 64 sampled worlds). */
export interface PublishedFigure {
  readonly setting: BatchSettingId;
  readonly rule: RuleId;
  readonly metric: MetricName;
  readonly value: number;
}

const row = (
  rule: RuleId,
  delivered: number,
  duplicates: number,
  confirmed: number,
): PublishedFigure[] => [
  { setting: 'default', rule, metric: 'delivered', value: delivered },
  { setting: 'default', rule, metric: 'duplicates', value: duplicates },
  { setting: 'default', rule, metric: 'confirmed', value: confirmed },
];

/** The simulator write-up's table (docs/origins.md; default channel, 64 seeds) and the figures quoted in its text, verbatim. */
export const PUBLISHED_FIGURES: readonly PublishedFigure[] = [
  ...row('send-once', 14.016, 0, 8.375),
  ...row('retry-oldest', 18, 13.844, 17.844),
  ...row('random-retry', 18, 14.172, 17.844),
  ...row('retry-key', 17.328, 0, 13.797),
  { setting: 'credits-24', rule: 'retry-key', metric: 'delivered', value: 9.5 },
  { setting: 'credits-24', rule: 'retry-oldest', metric: 'delivered', value: 15.984 },
  { setting: 'credits-100', rule: 'retry-key', metric: 'delivered', value: 18 },
  { setting: 'credits-100', rule: 'retry-oldest', metric: 'delivered', value: 18 },
  { setting: 'retention-8', rule: 'retry-key', metric: 'duplicates', value: 5.281 },
  { setting: 'loss-free', rule: 'retry-oldest', metric: 'duplicates', value: 2.484 },
];

export interface FigureComparison extends PublishedFigure {
  /** Our mean over the batch's worlds; NaN when the batch lacks the row. */
  readonly ours: number;
  /** ours − published. */
  readonly difference: number;
  /**
   * The difference in standard errors of a difference of two independent means over as many
   * worlds as ours (√2 · sd / √n): |z| below 2 is sampling noise. Null when every world agreed.
   */
  readonly z: number | null;
}

/**
 * Our means beside the simulator write-up's. The worlds differ (our generator is not theirs), so even a
 * faithful model differs by sampling noise: `z` says how much.
 */
export function compareWithPublished(rows: readonly MeansRow[]): FigureComparison[] {
  return PUBLISHED_FIGURES.map((figure) => {
    const found = findRow(rows, figure.setting, figure.rule);
    const ours = found?.mean[figure.metric] ?? Number.NaN;
    const difference = ours - figure.value;
    const standardError = found
      ? (Math.SQRT2 * found.sd[figure.metric]) / Math.sqrt(found.worlds)
      : 0;
    return {
      ...figure,
      ours,
      difference,
      z: standardError > 0 ? difference / standardError : null,
    };
  });
}
