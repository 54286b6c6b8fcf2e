import type { ClaimResult } from '../claims.js';
import type { FleetCell } from './fleet-batch.js';
import type { FleetRow } from './fleet-summary.js';
import { BUDGET_STRATEGIES } from './fleet-strategies.js';

/**
 * The retry-budget model: the failing-dependency model (dependency.ts, 1,000 first tries a second
 * for 10 s) run with oncely's client two ways, a token bucket in every process and one bucket
 * shared by the fleet, over fleet sizes. Per process, the retries a down dependency gets grow with
 * the fleet (each bucket's 500 tokens buy 100 retries); shared, the fleet gets 100 in all.
 */
export const BUDGET_FAILURE_RATES: readonly number[] = [0.5, 0.75, 1];
export const BUDGET_CLIENT_COUNTS: readonly number[] = [1, 8, 100, 1000];
/** The claim's bound: a shared budget's load at p = 1, in attempts per first try. */
export const SHARED_LOAD_BOUND = 1.1;

export function budgetCells(): FleetCell[] {
  return BUDGET_CLIENT_COUNTS.flatMap((clients) =>
    BUDGET_STRATEGIES.flatMap((strategy) =>
      BUDGET_FAILURE_RATES.map((x) => ({
        model: 'budget' as const,
        strategy,
        x,
        clients,
        totalRatePerSecond: 1000,
      })),
    ),
  );
}

const fmt = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? 'missing' : v.toFixed(3);

export function budgetClaims(rows: readonly FleetRow[]): ClaimResult[] {
  const load = (strategy: string, clients: number): number =>
    rows.find((r) => r.strategy === strategy && r.clients === clients && r.x === 1)?.values[
      'load'
    ] ?? Number.NaN;
  const shared = BUDGET_CLIENT_COUNTS.map((c) => ({ c, load: load('oncely-shared', c) }));
  const perProcess = load('oncely', 100);
  return [
    {
      id: 'shared-budget-caps-fleet',
      text: `One shared budget keeps a dependency failing 100 % at ≤ ${SHARED_LOAD_BOUND}× its first tries, at every fleet size`,
      reproduced: shared.every((s) => s.load <= SHARED_LOAD_BOUND),
      detail: shared.map((s) => `${s.c} clients: ${fmt(s.load)}×`).join(', '),
    },
    {
      id: 'per-process-budgets-grow-with-fleet',
      text: 'Budgets per process let it grow with the fleet: ≥ 1.5× at 100 clients, more than shared',
      reproduced: perProcess >= 1.5 && perProcess > load('oncely-shared', 100),
      detail: `100 clients: per process ${fmt(perProcess)}×, shared ${fmt(load('oncely-shared', 100))}×`,
    },
  ];
}

/** A load table per fleet size: failure rate down, per-process and shared across. */
export function formatBudgetTables(
  rows: readonly FleetRow[],
  table: (
    title: string,
    xName: string,
    rows: readonly FleetRow[],
    cell: (row: FleetRow) => string,
  ) => string,
): string {
  const parts: string[] = [];
  for (const clients of BUDGET_CLIENT_COUNTS) {
    const fleet = rows.filter((r) => r.clients === clients);
    if (fleet.length === 0) continue;
    if (parts.length > 0) parts.push('');
    parts.push(
      table(
        `Load: attempts ÷ first tries, ${clients} client${clients === 1 ? '' : 's'} sharing 1,000 req/s`,
        'p',
        fleet,
        (r) => r.values['load']!.toFixed(3),
      ),
    );
  }
  return parts.join('\n');
}
