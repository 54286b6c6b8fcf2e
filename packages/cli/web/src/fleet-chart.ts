import {
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
} from 'chart.js';
import type { FleetSummary } from '@oncely/cli/sim/index.js';

Chart.register(
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Legend,
  Tooltip,
);

const COLORS = ['#6b7280', '#c2410c', '#1d4ed8', '#7c3aed', '#be123c'];

/**
 * One line per strategy: write calls against clients (contention), load against p (dependency),
 * goodput per 500 ms bucket against time (overload). The table beside it holds the same numbers.
 */
export function drawFleetChart(canvas: HTMLCanvasElement, summary: FleetSummary): Chart {
  const strategies = [...new Set(summary.rows.map((r) => r.label))];
  const overload = summary.model === 'overload';
  const labels = overload
    ? (summary.rows[0]?.goodput ?? []).map((_, i) => ((i * 500) / 1000).toFixed(1))
    : [...new Set(summary.rows.map((r) => String(r.x)))];
  const metric = summary.model === 'contention' ? 'writes' : 'load';
  return new Chart(canvas, {
    type: 'line',
    data: {
      labels,
      datasets: strategies.map((label, i) => {
        const rows = summary.rows.filter((r) => r.label === label);
        return {
          label,
          data: overload ? [...(rows[0]?.goodput ?? [])] : rows.map((r) => r.values[metric] ?? 0),
          borderColor: COLORS[i % COLORS.length]!,
          backgroundColor: COLORS[i % COLORS.length]!,
          pointRadius: overload ? 0 : 2,
        };
      }),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: { legend: { position: 'bottom', labels: { boxWidth: 12, color: '#1f2937' } } },
      scales: {
        x: {
          title: {
            display: true,
            text: overload
              ? 'seconds'
              : summary.model === 'contention'
                ? 'clients'
                : 'failure rate p',
            color: '#374151',
          },
        },
        y: {
          beginAtZero: true,
          title: {
            display: true,
            text: overload
              ? 'goodput'
              : metric === 'writes'
                ? 'write calls'
                : 'attempts ÷ first tries',
            color: '#374151',
          },
        },
      },
    },
  });
}
