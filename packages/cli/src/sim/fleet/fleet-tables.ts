import { formatBudgetTables } from './budget-model.js';
import type { FleetRow, FleetSummary } from './fleet-summary.js';

/** The summary as text tables: one row per swept value, one column group per strategy. */
export function formatFleetTables(summary: FleetSummary): string {
  switch (summary.model) {
    case 'contention':
      return [
        table('Write calls (mean over seeds)', 'clients', summary.rows, (r) =>
          r.values['writes']!.toFixed(0),
        ),
        '',
        table('Time until the last client finishes, ms (mean)', 'clients', summary.rows, (r) =>
          r.values['finishMs']!.toFixed(0),
        ),
      ].join('\n');
    case 'dependency': {
      const main = summary.rows.filter((r) => r.totalRatePerSecond === 1000);
      const parts = [
        table('Load: attempts ÷ first tries (100 clients × 10 req/s)', 'p', main, (r) =>
          r.values['load']!.toFixed(3),
        ),
        '',
        table('Success: successes ÷ first tries (100 clients × 10 req/s)', 'p', main, (r) =>
          r.values['success']!.toFixed(3),
        ),
      ];
      for (const clients of [
        ...new Set(summary.rows.filter((r) => r.totalRatePerSecond === 100).map((r) => r.clients)),
      ]) {
        const shared = summary.rows.filter(
          (r) => r.totalRatePerSecond === 100 && r.clients === clients,
        );
        parts.push(
          '',
          table(`Load at ${clients} clients sharing 100 req/s`, 'p', shared, (r) =>
            r.values['load']!.toFixed(3),
          ),
        );
      }
      return parts.join('\n');
    }
    case 'budget':
      return formatBudgetTables(summary.rows, table);
    case 'overload': {
      const lines = [
        'After a 5 s outage (workers stalled at 5 s … 10 s), 700 req/s offered to a 1,000 req/s server',
        '',
      ];
      lines.push(
        `  ${'strategy'.padEnd(18)}${'recovery'.padStart(12)}${'stuck seeds'.padStart(13)}${'load'.padStart(8)}${'success'.padStart(9)}`,
      );
      for (const r of summary.rows) {
        const recovery = Number.isNaN(r.values['recoveryMs']!)
          ? 'never'
          : `${(r.values['recoveryMs']! / 1000).toFixed(1)} s`;
        lines.push(
          `  ${r.label.padEnd(18)}${recovery.padStart(12)}${`${r.values['stuckSeeds']}/${r.seeds}`.padStart(13)}${r.values['load']!.toFixed(2).padStart(8)}${r.values['success']!.toFixed(2).padStart(9)}`,
        );
      }
      return lines.join('\n');
    }
  }
}

export function table(
  title: string,
  xName: string,
  rows: readonly FleetRow[],
  cell: (row: FleetRow) => string,
): string {
  const labels = [...new Set(rows.map((r) => r.label))];
  const xs = [...new Set(rows.map((r) => r.x))];
  const width = Math.max(10, ...labels.map((l) => l.length + 2));
  const lines = [title, `  ${xName.padEnd(8)}${labels.map((l) => l.padStart(width)).join('')}`];
  for (const x of xs) {
    const cells = labels.map((l) => {
      const row = rows.find((r) => r.x === x && r.label === l);
      return (row ? cell(row) : '').padStart(width);
    });
    lines.push(`  ${String(x).padEnd(8)}${cells.join('')}`);
  }
  return lines.join('\n');
}
