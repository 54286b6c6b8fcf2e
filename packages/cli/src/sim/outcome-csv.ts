import { METRIC_NAMES } from './run-world.js';
import type { BatchOutcome, MeansRow } from './means-table.js';

/** Every outcome as JSON lines, keys in a fixed order: setting, seed, rule, then the metrics. */
export function outcomesToJsonLines(outcomes: readonly BatchOutcome[]): string {
  return outcomes.map((o) => `${JSON.stringify(ordered(o))}\n`).join('');
}

/** Every outcome as CSV with a header row (RFC 4180; no field here needs quoting). */
export function outcomesToCsv(outcomes: readonly BatchOutcome[]): string {
  const header = ['setting', 'seed', 'rule', ...METRIC_NAMES].join(',');
  const lines = outcomes.map((o) =>
    [o.setting, o.seed, o.rule, ...METRIC_NAMES.map((name) => o[name])].join(','),
  );
  return `${[header, ...lines].join('\n')}\n`;
}

/** The table of means as CSV: one row per (setting, rule), mean and sd of each metric. */
export function meansToCsv(rows: readonly MeansRow[]): string {
  const header = [
    'setting',
    'rule',
    'worlds',
    ...METRIC_NAMES.flatMap((name) => [`mean_${name}`, `sd_${name}`]),
  ].join(',');
  const lines = rows.map((row) =>
    [
      row.setting,
      row.rule,
      row.worlds,
      ...METRIC_NAMES.flatMap((name) => [round(row.mean[name]), round(row.sd[name])]),
    ].join(','),
  );
  return `${[header, ...lines].join('\n')}\n`;
}

function ordered(o: BatchOutcome): Record<string, string | number> {
  const out: Record<string, string | number> = { setting: o.setting, seed: o.seed, rule: o.rule };
  for (const name of METRIC_NAMES) out[name] = o[name];
  return out;
}

/** Six decimals: enough for a mean over millions of worlds, short enough to read. */
function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
