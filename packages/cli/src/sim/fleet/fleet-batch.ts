import { InvalidOptionError } from 'oncely/policy';
import { CONTENTION_STRATEGIES, runContention, type ContentionStrategy } from './contention.js';
import { runDependency } from './dependency.js';
import { budgetCells } from './budget-model.js';
import { FLEET_STRATEGIES, type BudgetStrategy, type FleetStrategy } from './fleet-strategies.js';
import { runOverload } from './overload.js';

/**
 * A fleet batch: the cells of one model (strategy × the swept value), each run on seeds
 * firstSeed … firstSeed + seeds − 1. A cell's result depends on nothing but the cell and its seeds,
 * so cells can run in any order, in any worker, and merge to the same totals.
 */
export const FLEET_MODELS = ['contention', 'dependency', 'overload', 'budget'] as const;
export type FleetModel = (typeof FLEET_MODELS)[number];

export interface FleetCell {
  readonly model: FleetModel;
  readonly strategy: ContentionStrategy | FleetStrategy | BudgetStrategy;
  /** Contention: clients. Dependency and budget: failure rate. Overload: unused (0). */
  readonly x: number;
  /** Dependency and budget: clients sharing totalRatePerSecond. */
  readonly clients: number;
  readonly totalRatePerSecond: number;
}

/** Sum, sum of squares, min and max of one metric over the seeds of a cell. */
export interface MetricStats {
  n: number;
  sum: number;
  sumSq: number;
  min: number;
  max: number;
}

export interface CellResult {
  readonly cell: FleetCell;
  readonly seeds: number;
  readonly metrics: { readonly [name: string]: MetricStats };
  /** Overload only: goodput and load per bucket, summed over seeds (divide by seeds). */
  readonly goodputSum?: readonly number[];
  readonly loadSum?: readonly number[];
  /** Overload only: recovery per seed, null when stuck. */
  readonly recoveries?: readonly (number | null)[];
}

export const CONTENTION_CLIENTS: readonly number[] = Array.from(
  { length: 19 },
  (_, i) => 10 * (i + 1),
);
export const DEPENDENCY_FAILURE_RATES: readonly number[] = [
  0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75,
];
/** The 2022 post's second experiment: this many clients share 100 requests per second. */
export const DEPENDENCY_CLIENT_COUNTS: readonly number[] = [10, 100, 1000];
export const DEFAULT_FLEET_SEEDS: { readonly [m in FleetModel]: number } = {
  contention: 100,
  dependency: 5,
  overload: 10,
  budget: 5,
};

/** The cells of a model's batch, in a fixed order (the order of every output). */
export function fleetCells(
  model: FleetModel,
  options: { clients?: readonly number[] } = {},
): FleetCell[] {
  switch (model) {
    case 'contention':
      return CONTENTION_STRATEGIES.flatMap((strategy) =>
        (options.clients ?? CONTENTION_CLIENTS).map((x) => ({
          model,
          strategy,
          x,
          clients: x,
          totalRatePerSecond: 0,
        })),
      );
    case 'dependency': {
      const cells: FleetCell[] = [];
      for (const strategy of FLEET_STRATEGIES) {
        for (const x of DEPENDENCY_FAILURE_RATES)
          cells.push({ model, strategy, x, clients: 100, totalRatePerSecond: 1000 });
      }
      for (const clients of DEPENDENCY_CLIENT_COUNTS) {
        for (const strategy of FLEET_STRATEGIES) {
          for (const x of DEPENDENCY_FAILURE_RATES)
            cells.push({ model, strategy, x, clients, totalRatePerSecond: 100 });
        }
      }
      return cells;
    }
    case 'overload':
      return FLEET_STRATEGIES.map((strategy) => ({
        model,
        strategy,
        x: 0,
        clients: 100,
        totalRatePerSecond: 700,
      }));
    case 'budget':
      return budgetCells();
  }
}

/** Runs one cell on its seeds. Pure and synchronous: the CLI runs cells in worker threads. */
export function runCell(cell: FleetCell, seeds: number, firstSeed = 0): CellResult {
  if (!Number.isInteger(seeds) || seeds < 1 || seeds > 100_000)
    throw new InvalidOptionError('seeds', seeds, 'an integer from 1 to 100000');
  const metrics: Record<string, MetricStats> = {};
  const add = (name: string, value: number): void => {
    const m = (metrics[name] ??= {
      n: 0,
      sum: 0,
      sumSq: 0,
      min: Number.POSITIVE_INFINITY,
      max: Number.NEGATIVE_INFINITY,
    });
    m.n++;
    m.sum += value;
    m.sumSq += value * value;
    m.min = Math.min(m.min, value);
    m.max = Math.max(m.max, value);
  };
  let goodputSum: number[] | undefined;
  let loadSum: number[] | undefined;
  const recoveries: (number | null)[] = [];
  for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
    if (cell.model === 'contention') {
      const o = runContention({ clients: cell.x, seed }, cell.strategy as ContentionStrategy);
      add('writes', o.writes);
      add('finishMs', o.finishMs);
    } else if (cell.model === 'dependency' || cell.model === 'budget') {
      const o = runDependency(
        {
          seed,
          failureRate: cell.x,
          clients: cell.clients,
          totalRatePerSecond: cell.totalRatePerSecond,
        },
        cell.strategy as FleetStrategy | BudgetStrategy,
      );
      add('firstTries', o.firstTries);
      add('attempts', o.attempts);
      add('successes', o.successes);
    } else {
      const o = runOverload(
        { seed, clients: cell.clients, totalRatePerSecond: cell.totalRatePerSecond },
        cell.strategy as FleetStrategy,
      );
      add('firstTries', o.firstTries);
      add('attempts', o.attempts);
      add('successes', o.successes);
      recoveries.push(o.recoveryMs);
      goodputSum = sumInto(goodputSum, o.goodput);
      loadSum = sumInto(loadSum, o.load);
    }
  }
  if (cell.model !== 'overload') return { cell, seeds, metrics };
  return { cell, seeds, metrics, goodputSum: goodputSum!, loadSum: loadSum!, recoveries };
}

function sumInto(sum: number[] | undefined, values: readonly number[]): number[] {
  const out = sum ?? new Array<number>(values.length).fill(0);
  values.forEach((v, i) => (out[i] = (out[i] ?? 0) + v));
  return out;
}

export function mean(stats: MetricStats | undefined): number {
  return stats === undefined || stats.n === 0 ? Number.NaN : stats.sum / stats.n;
}

/** The sample standard deviation over seeds. */
export function sd(stats: MetricStats | undefined): number {
  if (stats === undefined || stats.n < 2) return 0;
  const m = stats.sum / stats.n;
  return Math.sqrt(Math.max(0, (stats.sumSq - stats.n * m * m) / (stats.n - 1)));
}
