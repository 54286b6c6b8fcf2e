import type { RuleId } from './rules.js';
import { METRIC_NAMES, type MetricName, type WorldMetrics } from './run-world.js';

/** One kept outcome of a batch: which world, which rule, and its metrics (flat, for JSON lines and CSV). */
export type BatchOutcome = {
  readonly setting: string;
  readonly seed: number;
  readonly rule: RuleId;
} & WorldMetrics;

/** The summary of one (setting, rule) over its worlds. `sd` is the sample standard deviation. */
export interface MeansRow {
  readonly setting: string;
  readonly rule: RuleId;
  readonly worlds: number;
  readonly mean: WorldMetrics;
  readonly sd: WorldMetrics;
  readonly min: WorldMetrics;
  readonly max: WorldMetrics;
}

interface Cell {
  readonly setting: string;
  readonly rule: RuleId;
  worlds: number;
  readonly sum: Record<MetricName, number>;
  readonly sumSq: Record<MetricName, number>;
  readonly min: Record<MetricName, number>;
  readonly max: Record<MetricName, number>;
}

/**
 * Sums outcomes as they come, so a batch need not keep them to print its means (and the
 * "in any world" claims can read each cell's min and max). Rows come out in first-seen order.
 */
export class MeansAccumulator {
  readonly #cells = new Map<string, Cell>();

  add(outcome: BatchOutcome): void {
    const id = `${outcome.setting}\u0000${outcome.rule}`;
    let cell = this.#cells.get(id);
    if (!cell) {
      cell = {
        setting: outcome.setting,
        rule: outcome.rule,
        worlds: 0,
        sum: filled(0),
        sumSq: filled(0),
        min: filled(Infinity),
        max: filled(-Infinity),
      };
      this.#cells.set(id, cell);
    }
    cell.worlds++;
    for (const name of METRIC_NAMES) {
      const value = outcome[name];
      cell.sum[name] += value;
      cell.sumSq[name] += value * value;
      if (value < cell.min[name]) cell.min[name] = value;
      if (value > cell.max[name]) cell.max[name] = value;
    }
  }

  rows(): MeansRow[] {
    return [...this.#cells.values()].map((cell) => {
      const mean = filled(0);
      const sd = filled(0);
      for (const name of METRIC_NAMES) {
        mean[name] = cell.sum[name] / cell.worlds;
        const variance =
          cell.worlds > 1
            ? (cell.sumSq[name] - cell.worlds * mean[name] ** 2) / (cell.worlds - 1)
            : 0;
        // Rounding can leave a tiny negative variance when every world agrees.
        sd[name] = Math.sqrt(Math.max(0, variance));
      }
      return {
        setting: cell.setting,
        rule: cell.rule,
        worlds: cell.worlds,
        mean,
        sd,
        min: { ...cell.min },
        max: { ...cell.max },
      };
    });
  }
}

/** The table of means (with spread, min and max) of a list of outcomes, one row per (setting, rule). */
export function meansTable(outcomes: Iterable<BatchOutcome>): MeansRow[] {
  const accumulator = new MeansAccumulator();
  for (const outcome of outcomes) accumulator.add(outcome);
  return accumulator.rows();
}

/** The row for this setting and rule, or undefined. */
export function findRow(
  rows: readonly MeansRow[],
  setting: string,
  rule: RuleId,
): MeansRow | undefined {
  return rows.find((row) => row.setting === setting && row.rule === rule);
}

function filled(value: number): Record<MetricName, number> {
  return {
    delivered: value,
    duplicates: value,
    confirmed: value,
    sends: value,
    creditsSpent: value,
    unresolved: value,
  };
}
