import { CONTENTION_LABELS, type ContentionStrategy } from './contention.js';
import { checkFleetClaims } from './fleet-claims.js';
import { type CellResult, type FleetModel, mean, sd } from './fleet-batch.js';
import {
  BUDGET_LABELS,
  FLEET_LABELS,
  type BudgetStrategy,
  type FleetStrategy,
} from './fleet-strategies.js';
import type { ClaimResult } from '../claims.js';

/** One cell, reduced to what the tables, CSV, JSON and charts show. */
export interface FleetRow {
  readonly strategy: string;
  readonly label: string;
  /** Contention: clients; dependency: failure rate; overload: 0. */
  readonly x: number;
  readonly clients: number;
  readonly totalRatePerSecond: number;
  readonly seeds: number;
  /** Means over seeds (contention: writes, finishMs; others: load, success and their parts). */
  readonly values: { readonly [name: string]: number };
  /** Standard deviations over seeds of the same. */
  readonly sds: { readonly [name: string]: number };
  /** Overload: mean goodput and load per bucket over seeds, and each seed's recovery (null: stuck). */
  readonly goodput?: readonly number[];
  readonly load?: readonly number[];
  readonly recoveries?: readonly (number | null)[];
}

export interface FleetSummary {
  readonly model: FleetModel;
  readonly seeds: number;
  readonly rows: readonly FleetRow[];
  readonly claims: readonly ClaimResult[];
}

export function strategyLabel(model: FleetModel, strategy: string): string {
  if (model === 'contention') return CONTENTION_LABELS[strategy as ContentionStrategy];
  if (model === 'budget') return BUDGET_LABELS[strategy as BudgetStrategy];
  return FLEET_LABELS[strategy as FleetStrategy];
}

/** Reduces cell results (in cell order) to rows and checks the model's claims on them. */
export function summarizeFleet(model: FleetModel, results: readonly CellResult[]): FleetSummary {
  const rows = results.map((r): FleetRow => {
    const m = r.metrics;
    const base = {
      strategy: r.cell.strategy,
      label: strategyLabel(model, r.cell.strategy),
      x: r.cell.x,
      clients: r.cell.clients,
      totalRatePerSecond: r.cell.totalRatePerSecond,
      seeds: r.seeds,
    };
    if (model === 'contention') {
      return {
        ...base,
        values: { writes: mean(m['writes']), finishMs: mean(m['finishMs']) },
        sds: { writes: sd(m['writes']), finishMs: sd(m['finishMs']) },
      };
    }
    const first = m['firstTries']!.sum;
    const values = {
      load: m['attempts']!.sum / first,
      success: m['successes']!.sum / first,
      firstTries: mean(m['firstTries']),
      attempts: mean(m['attempts']),
      successes: mean(m['successes']),
    };
    const sds = {
      firstTries: sd(m['firstTries']),
      attempts: sd(m['attempts']),
      successes: sd(m['successes']),
    };
    if (model === 'dependency' || model === 'budget') return { ...base, values, sds };
    const recoveries = r.recoveries ?? [];
    const recovered = recoveries.filter((v): v is number => v !== null);
    return {
      ...base,
      values: {
        ...values,
        recoveryMs:
          recovered.length === recoveries.length
            ? recovered.reduce((a, b) => a + b, 0) / recovered.length
            : Number.NaN,
        stuckSeeds: recoveries.length - recovered.length,
      },
      sds,
      goodput: (r.goodputSum ?? []).map((v) => v / r.seeds),
      load: (r.loadSum ?? []).map((v) => v / r.seeds),
      recoveries,
    };
  });
  return { model, seeds: results[0]?.seeds ?? 0, rows, claims: checkFleetClaims(model, rows) };
}

/** The rows as CSV, one line per cell: the columns every model shares, then its own means. */
export function fleetCsv(summary: FleetSummary): string {
  const names = Object.keys(summary.rows[0]?.values ?? {});
  const head = [
    'model',
    'strategy',
    'x',
    'clients',
    'totalRatePerSecond',
    'seeds',
    ...names,
    ...Object.keys(summary.rows[0]?.sds ?? {}).map((n) => `${n}Sd`),
  ];
  const lines = summary.rows.map((row) =>
    [
      summary.model,
      row.strategy,
      row.x,
      row.clients,
      row.totalRatePerSecond,
      row.seeds,
      ...names.map((n) => formatNumber(row.values[n]!)),
      ...Object.values(row.sds).map(formatNumber),
    ].join(','),
  );
  return `${[head.join(','), ...lines].join('\n')}\n`;
}

function formatNumber(value: number): string {
  return Number.isNaN(value) ? '' : String(Number(value.toFixed(6)));
}
