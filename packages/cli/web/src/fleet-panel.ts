import {
  CONTENTION_STRATEGIES,
  FLEET_MODELS,
  FLEET_STRATEGIES,
  fleetCells,
  runCell,
  summarizeFleet,
  type FleetModel,
  type FleetRow,
  type FleetSummary,
} from '@oncely/cli/sim/index.js';
import { byId, h } from './dom.js';

/** What the fleet section reads from the URL: ?fleet=MODEL&fleetSeeds=N&fleetStrategies=a,b&fleetClients=10,20 */
export interface FleetQuery {
  readonly model: FleetModel;
  readonly seeds: number;
  readonly strategies: readonly string[] | undefined;
  readonly clients: readonly number[];
}

const PAGE_CLIENTS = [10, 20, 30, 40, 50, 60, 70, 80];

export function fleetQueryFrom(search: URLSearchParams): FleetQuery {
  const model = (FLEET_MODELS as readonly string[]).includes(search.get('fleet') ?? '')
    ? (search.get('fleet') as FleetModel)
    : 'contention';
  const seeds = Math.min(20, Math.max(1, Math.trunc(Number(search.get('fleetSeeds') ?? '3')) || 3));
  const known: readonly string[] =
    model === 'contention' ? CONTENTION_STRATEGIES : FLEET_STRATEGIES;
  const picked = (search.get('fleetStrategies') ?? '').split(',').filter((s) => known.includes(s));
  const clients = (search.get('fleetClients') ?? '')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n >= 1 && n <= 200);
  return {
    model,
    seeds,
    strategies: picked.length > 0 ? picked : undefined,
    clients: clients.length > 0 ? clients : PAGE_CLIENTS,
  };
}

/**
 * Runs a small fleet batch in the page (the same cells as `oncely sim fleet`, fewer seeds and
 * client counts; the dependency model at 100 clients only) and keeps only the picked strategies.
 */
export function runPageFleet(query: FleetQuery): FleetSummary {
  const cells = fleetCells(query.model, { clients: query.clients }).filter(
    (cell) =>
      (query.strategies === undefined || query.strategies.includes(cell.strategy)) &&
      (cell.model !== 'dependency' || cell.totalRatePerSecond === 1000),
  );
  return summarizeFleet(
    query.model,
    cells.map((cell) => runCell(cell, query.seeds)),
  );
}

/** Wires the fleet section: the form writes the URL, a run draws the chart, the table and the claims. */
export function setUpFleetPanel(): void {
  const form = byId<HTMLFormElement>('fleet-form');
  const model = byId<HTMLSelectElement>('fleet-model');
  const seeds = byId<HTMLInputElement>('fleet-seeds');
  const status = byId('fleet-status');
  const search = new URLSearchParams(location.search);
  const initial = fleetQueryFrom(search);
  model.value = initial.model;
  seeds.value = String(initial.seeds);
  let chart: { destroy(): void } | undefined;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams(location.search);
    params.set('fleet', model.value);
    params.set('fleetSeeds', seeds.value);
    history.replaceState(null, '', `?${params.toString()}`);
    const query = fleetQueryFrom(params);
    status.textContent = `Running ${query.model} over ${query.seeds} seeds…`;
    void (async () => {
      // Let the status paint before the synchronous run.
      await new Promise((resolve) => requestAnimationFrame(resolve));
      const summary = runPageFleet(query);
      renderTable(summary);
      byId('fleet-claims').replaceChildren(
        ...summary.claims.map((c) =>
          h(
            'p',
            { 'data-claim': c.id },
            `${c.reproduced ? 'reproduced' : 'NOT REPRODUCED'}: ${c.text} (${c.detail})`,
          ),
        ),
      );
      byId('fleet-results').hidden = false;
      const { drawFleetChart } = await import('./fleet-chart.js');
      chart?.destroy();
      chart = drawFleetChart(byId<HTMLCanvasElement>('fleet-chart'), summary);
      status.textContent = `Done: ${summary.rows.length} cells × ${query.seeds} seeds.`;
    })();
  });
}

const COLUMNS: { readonly [m in FleetModel]: readonly string[] } = {
  contention: ['writes', 'finishMs'],
  dependency: ['load', 'success'],
  budget: ['load', 'success'],
  overload: ['recoveryMs', 'stuckSeeds', 'load', 'success'],
};

function renderTable(summary: FleetSummary): void {
  const columns = COLUMNS[summary.model];
  const cell = (row: FleetRow, name: string) => {
    const value = row.values[name]!;
    return h(
      'td',
      { 'data-metric': name },
      Number.isNaN(value) ? 'never' : value.toFixed(name === 'load' || name === 'success' ? 3 : 0),
    );
  };
  const table = h(
    'table',
    { id: 'fleet-table' },
    h(
      'thead',
      {},
      h('tr', {}, h('th', {}, 'Strategy'), h('th', {}, 'x'), ...columns.map((c) => h('th', {}, c))),
    ),
    h(
      'tbody',
      {},
      ...summary.rows.map((row) =>
        h(
          'tr',
          { 'data-strategy': row.strategy, 'data-x': String(row.x) },
          h('th', {}, row.label),
          h('td', {}, String(row.x)),
          ...columns.map((c) => cell(row, c)),
        ),
      ),
    ),
  );
  byId('fleet-table-holder').replaceChildren(table);
}
