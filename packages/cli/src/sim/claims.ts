import { BATCH_SETTINGS, type BatchSetting } from './batch-settings.js';
import type { ClosedFormResult } from './closed-form.js';
import { findRow, type MeansRow } from './means-table.js';
import { RULES, type RuleId } from './rules.js';
import type { MetricName } from './run-world.js';

/** A claim of the simulator write-up (docs/origins.md) (or one of ours), checked in our model. */
export interface ClaimResult {
  readonly id: string;
  readonly text: string;
  readonly reproduced: boolean;
  /** The numbers the verdict rests on. */
  readonly detail: string;
}

export interface CheckClaimsOptions {
  /** The settings the rows came from (tells which ones keep keys for the whole run). @default BATCH_SETTINGS */
  readonly settings?: readonly BatchSetting[];
  /** Adds the closed-form claim when given. */
  readonly closedForm?: ClosedFormResult;
}

const KEYED_RULES = RULES.filter((rule) => rule.keyed).map((rule) => rule.id);

/**
 * Checks the simulator write-up's claims on a batch's table of means (docs/origins.md). "Never" and "nothing" claims read every
 * world (each row's max); comparisons read the means over the seeds. A claim whose rows are
 * missing from the batch counts as not reproduced.
 */
export function checkClaims(
  rows: readonly MeansRow[],
  options: CheckClaimsOptions = {},
): ClaimResult[] {
  const settings = options.settings ?? BATCH_SETTINGS;
  const mean = (setting: string, rule: RuleId, metric: MetricName): number =>
    findRow(rows, setting, rule)?.mean[metric] ?? Number.NaN;
  /** The largest value of `metric` over every world of these rows (NaN when there are none). */
  const maxOver = (
    pick: (row: MeansRow) => boolean,
    metric: MetricName,
  ): { max: number; worlds: number } => {
    const picked = rows.filter(pick);
    if (picked.length === 0) return { max: Number.NaN, worlds: 0 };
    return {
      max: Math.max(...picked.map((row) => row.max[metric])),
      worlds: picked.reduce((n, row) => n + row.worlds, 0),
    };
  };
  const never = (
    id: string,
    text: string,
    pick: (row: MeansRow) => boolean,
    metric: MetricName,
  ): ClaimResult => {
    const { max, worlds } = maxOver(pick, metric);
    return {
      id,
      text,
      reproduced: max === 0,
      detail:
        worlds === 0 ? 'not in this batch' : `largest ${metric} ${max} over ${worlds} outcomes`,
    };
  };

  const wholeRunSettings = new Set<string>(
    settings
      .filter((s) => s.overrides.retentionTicks == null && s.overrides.forgetKeysAt == null)
      .map((s) => s.id),
  );
  const claims: ClaimResult[] = [
    never(
      'send-once-never-duplicates',
      'Send once never duplicates, in any world',
      (row) => row.rule === 'send-once',
      'duplicates',
    ),
    never(
      'keyed-never-duplicates',
      'Retry + key (and every keyed rule) with whole-run retention and no forgetting never duplicates, in any world',
      (row) => KEYED_RULES.includes(row.rule) && wholeRunSettings.has(row.setting),
      'duplicates',
    ),
  ];

  claims.push(...meanClaims(mean));

  claims.push(
    never(
      'loss-free-retry-after-16-never-duplicates',
      'On a loss-free channel, Retry oldest never duplicates with retry-after 16',
      (row) => row.rule === 'retry-oldest' && row.setting === 'loss-free-retry-after-16',
      'duplicates',
    ),
    never(
      'request-loss-total-delivers-nothing',
      'Total request loss delivers nothing',
      (row) => row.setting === 'request-loss-total',
      'delivered',
    ),
    never(
      'receipt-loss-total-confirms-nothing',
      'Total receipt loss confirms nothing',
      (row) => row.setting === 'receipt-loss-total',
      'confirmed',
    ),
  );

  if (options.closedForm) claims.push(closedFormClaim(options.closedForm));
  return claims;
}

const fmt = (value: number): string => (Number.isNaN(value) ? 'missing' : value.toFixed(3));

/** The claims that compare means over the seeds: who duplicates, who delivers more. */
function meanClaims(
  mean: (setting: string, rule: RuleId, metric: MetricName) => number,
): ClaimResult[] {
  const claims: ClaimResult[] = [];
  const oldestDup = mean('default', 'retry-oldest', 'duplicates');
  const randomDup = mean('default', 'random-retry', 'duplicates');
  claims.push({
    id: 'unkeyed-retries-duplicate',
    text: 'Retry oldest and Random retry duplicate on the default channel',
    reproduced: oldestDup > 0 && randomDup > 0,
    detail: `mean duplicates: Retry oldest ${fmt(oldestDup)}, Random retry ${fmt(randomDup)}`,
  });

  const keyDelivered = mean('default', 'retry-key', 'delivered');
  const oldestDelivered = mean('default', 'retry-oldest', 'delivered');
  const keyConfirmed = mean('default', 'retry-key', 'confirmed');
  const oldestConfirmed = mean('default', 'retry-oldest', 'confirmed');
  claims.push({
    id: 'key-delivers-less',
    text: 'Retry + key delivers and confirms less than Retry oldest on the default channel',
    reproduced: keyDelivered < oldestDelivered && keyConfirmed < oldestConfirmed,
    detail: `delivered ${fmt(keyDelivered)} < ${fmt(oldestDelivered)}, confirmed ${fmt(keyConfirmed)} < ${fmt(oldestConfirmed)}`,
  });

  const key24 = mean('credits-24', 'retry-key', 'delivered');
  const oldest24 = mean('credits-24', 'retry-oldest', 'delivered');
  claims.push({
    id: 'key-delivers-less-at-24',
    text: 'At 24 credits, Retry + key delivers less than Retry oldest',
    reproduced: key24 < oldest24,
    detail: `delivered ${fmt(key24)} < ${fmt(oldest24)}`,
  });

  for (const [id, setting, text] of [
    ['short-retention-duplicates', 'retention-8', '8-tick retention makes Retry + key duplicate'],
    [
      'forgetting-duplicates',
      'forget-40',
      'Forgetting keys at tick 40 makes Retry + key duplicate',
    ],
    [
      'loss-free-retry-after-8-duplicates',
      'loss-free',
      'On a loss-free channel, Retry oldest duplicates with retry-after 8',
    ],
  ] as const) {
    const rule: RuleId = setting === 'loss-free' ? 'retry-oldest' : 'retry-key';
    const value = mean(setting, rule, 'duplicates');
    claims.push({ id, text, reproduced: value > 0, detail: `mean duplicates ${fmt(value)}` });
  }
  return claims;
}

/** The closed form of docs/simulator.md against the simulated means. */
function closedFormClaim(closed: NonNullable<CheckClaimsOptions['closedForm']>): ClaimResult {
  const { expected: e, simulated: s } = closed;
  const n = closed.params.maxAttempts;
  return {
    id: 'closed-form',
    text: `Closed form (q_r ${closed.params.requestLoss}, q_a ${closed.params.receiptLoss}, N ${n}, ${closed.seeds} seeds) within ${closed.tolerance * 100}%`,
    reproduced: closed.withinTolerance,
    detail:
      `delivered ${s.delivered.toFixed(4)} vs ${e.delivered.toFixed(4)}, confirmed ${s.confirmed.toFixed(4)} vs ${e.confirmed.toFixed(4)}, ` +
      `effects/job ${s.effects.toFixed(4)} vs ${e.effects.toFixed(4)}`,
  };
}
