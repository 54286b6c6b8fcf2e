import { InvalidOptionError } from 'oncely/policy';
import { MatchedDraws } from './matched-draws.js';
import { RULE_IDS, ruleById, type Rule, type RuleId } from './rules.js';
import type { TraceEvent } from './trace.js';
import { WorldRun } from './world-engine.js';
import { resolveWorldParams, type WorldParams } from './world-params.js';

/**
 * What an outcome is measured by, in a stable order (JSON, CSV and tables follow it):
 * - delivered: jobs with at least one effect;
 * - duplicates: effects beyond the first, summed over jobs;
 * - confirmed: jobs whose sender got a receipt before the run ended;
 * - sends, creditsSpent;
 * - unresolved: jobs never confirmed: the sender cannot tell whether they happened.
 */
export const METRIC_NAMES = [
  'delivered',
  'duplicates',
  'confirmed',
  'sends',
  'creditsSpent',
  'unresolved',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** Column titles of the metrics, in METRIC_NAMES order: the CLI's tables and the page's show the same words. */
export const METRIC_TITLES: { readonly [name in MetricName]: string } = {
  delivered: 'Delivered',
  duplicates: 'Duplicates',
  confirmed: 'Confirmed',
  sends: 'Sends',
  creditsSpent: 'Credits spent',
  unresolved: 'Unresolved',
};
export type WorldMetrics = { readonly [name in MetricName]: number };

export interface WorldOutcome {
  readonly rule: RuleId;
  readonly seed: number;
  readonly metrics: WorldMetrics;
  /** Every event, in order; present when the trace was asked for. */
  readonly trace?: readonly TraceEvent[];
}

export interface RunWorldOptions {
  /** Record the event trace. The batch turns it off: a world is then allocation-light. @default true */
  readonly trace?: boolean;
  /** Draws shared by every rule run on this world (made on demand otherwise). */
  readonly draws?: MatchedDraws;
}

/** Simulates one world under one rule. Validates `params` (InvalidOptionError names the bad one). */
export function runWorld(
  params: Partial<WorldParams>,
  rule: Rule | RuleId,
  options: RunWorldOptions = {},
): WorldOutcome {
  const resolved = resolveWorldParams(params);
  const found = typeof rule === 'string' ? ruleById(rule) : rule;
  if (!found) throw new InvalidOptionError('rule', rule, `one of ${RULE_IDS.join(', ')}`);
  const draws = options.draws ?? drawsFor(resolved);
  if (
    !draws.matches(
      resolved.seed,
      resolved.jobs,
      resolved.requestLoss,
      resolved.receiptLoss,
      resolved.maxDelayTicks,
    )
  ) {
    throw new InvalidOptionError(
      'draws',
      'MatchedDraws',
      'draws made for the same seed, jobs, losses and maxDelayTicks',
    );
  }
  return simulateWorld(resolved, found, draws, options.trace ?? true);
}

/** The matched draws for a world; share one between the rules run on it. */
export function drawsFor(params: WorldParams): MatchedDraws {
  return new MatchedDraws(
    params.seed,
    params.jobs,
    params.requestLoss,
    params.receiptLoss,
    params.maxDelayTicks,
  );
}

/** The engine, for already-validated params (apps/sim/world-engine.ts runs the ticks). */
export function simulateWorld(
  p: WorldParams,
  rule: Rule,
  draws: MatchedDraws,
  record: boolean,
): WorldOutcome {
  const { effects, confirmedAt, sends, creditsLeft, trace } = new WorldRun(
    p,
    rule,
    draws,
    record,
  ).run();
  let delivered = 0;
  let duplicates = 0;
  let confirmed = 0;
  for (let j = 0; j < p.jobs; j++) {
    if (effects[j]! > 0) delivered++;
    if (effects[j]! > 1) duplicates += effects[j]! - 1;
    if (confirmedAt[j]! >= 0) confirmed++;
  }
  const metrics: WorldMetrics = {
    delivered,
    duplicates,
    confirmed,
    sends,
    creditsSpent: p.credits - creditsLeft,
    unresolved: p.jobs - confirmed,
  };
  return trace
    ? { rule: rule.id, seed: p.seed, metrics, trace }
    : { rule: rule.id, seed: p.seed, metrics };
}
