import { InvalidOptionError } from 'oncely/policy';
import { BATCH_SETTINGS, type BatchSetting } from './batch-settings.js';
import { MeansAccumulator, type BatchOutcome, type MeansRow } from './means-table.js';
import { RULES, type Rule, type RuleId } from './rules.js';
import { drawsFor, simulateWorld } from './run-world.js';
import { resolveWorldParams, type WorldParams } from './world-params.js';

export interface RunBatchOptions {
  /** Worlds per setting: seeds firstSeed … firstSeed + seeds − 1. @default 64 */
  readonly seeds?: number;
  /** @default 0 */
  readonly firstSeed?: number;
  /** @default BATCH_SETTINGS (the ten) */
  readonly settings?: readonly BatchSetting[];
  /** @default RULES (all seven) */
  readonly rules?: readonly Rule[];
  /** Parameters under every setting's overrides. @default {} */
  readonly base?: Partial<Omit<WorldParams, 'seed'>>;
  /** Keep every outcome in the result (off for very large runs: the means are kept anyway). @default true */
  readonly keepOutcomes?: boolean;
  /** Called with each outcome as it is made, in batch order. */
  readonly onOutcome?: (outcome: BatchOutcome) => void;
  /** Called after each world (every rule run on it) with worlds done and worlds in all. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** The simulator write-up's batch (docs/origins.md): 64 seeds per setting, seeds 0–63. */
export const DEFAULT_BATCH = { seeds: 64, firstSeed: 0 } as const;

export interface BatchResult {
  readonly seeds: number;
  readonly firstSeed: number;
  readonly settings: readonly string[];
  readonly rules: readonly RuleId[];
  readonly worlds: number;
  readonly outcomeCount: number;
  /** In batch order: setting, then seed, then rule. Empty when keepOutcomes is false. */
  readonly outcomes: readonly BatchOutcome[];
  readonly means: readonly MeansRow[];
}

/**
 * Runs every rule on every world of every setting. All rules of a world share its matched draws,
 * and no trace is recorded, so a world costs a few microseconds. Synchronous on purpose: the
 * browser page runs it in a web worker and posts onProgress onwards.
 */
export function runBatch(options: RunBatchOptions = {}): BatchResult {
  const seeds = options.seeds ?? DEFAULT_BATCH.seeds;
  const firstSeed = options.firstSeed ?? DEFAULT_BATCH.firstSeed;
  if (!Number.isInteger(seeds) || seeds < 1 || seeds > 10_000_000) {
    throw new InvalidOptionError('seeds', seeds, 'an integer from 1 to 10000000');
  }
  if (!Number.isInteger(firstSeed) || firstSeed < 0 || firstSeed + seeds - 1 > 0xffff_ffff) {
    throw new InvalidOptionError(
      'firstSeed',
      firstSeed,
      `an integer from 0 to ${0xffff_ffff - seeds + 1}`,
    );
  }
  const settings = options.settings ?? BATCH_SETTINGS;
  const rules = options.rules ?? RULES;
  const keep = options.keepOutcomes ?? true;
  const resolved = settings.map((setting) =>
    resolveWorldParams({ ...options.base, ...setting.overrides }),
  );

  const outcomes: BatchOutcome[] = [];
  const accumulator = new MeansAccumulator();
  const total = settings.length * seeds;
  let done = 0;
  settings.forEach((setting, s) => {
    const base = resolved[s]!;
    for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
      const params: WorldParams = { ...base, seed };
      const draws = drawsFor(params);
      for (const rule of rules) {
        const { metrics } = simulateWorld(params, rule, draws, false);
        const outcome: BatchOutcome = { setting: setting.id, seed, rule: rule.id, ...metrics };
        accumulator.add(outcome);
        if (keep) outcomes.push(outcome);
        options.onOutcome?.(outcome);
      }
      options.onProgress?.(++done, total);
    }
  });
  return {
    seeds,
    firstSeed,
    settings: settings.map((setting) => setting.id),
    rules: rules.map((rule) => rule.id),
    worlds: total,
    outcomeCount: total * rules.length,
    outcomes,
    means: accumulator.rows(),
  };
}
