import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  Tooltip,
  type Plugin,
} from 'chart.js';
import {
  BATCH_SETTINGS,
  RULES,
  findRow,
  type MeansRow,
  type MetricName,
} from '@oncely/cli/sim/index.js';
import { RULE_COLORS } from './rule-colors.js';
import { zeroGroupIndexes, zeroGroupText } from './zero-groups.js';

// Only the pieces a grouped bar chart needs, so esbuild drops the rest of chart.js.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/**
 * Writes "all 0" (or "0" where a group is narrow) just above the baseline of each group whose
 * shown bars are all 0, so the empty slot reads as a value. The canvas's data-zero-groups lists
 * what was drawn where (CSS px within the canvas): the same words a person sees, for the page test.
 */
const zeroGroupLabels: Plugin<'bar'> = {
  id: 'oncelyZeroGroupLabels',
  afterDatasetsDraw(chart) {
    const { ctx, chartArea, scales } = chart;
    const categories = chart.data.labels ?? [];
    const shown = chart.data.datasets.filter((_, i) => chart.isDatasetVisible(i));
    const groupWidth = (chartArea.right - chartArea.left) / Math.max(1, categories.length);
    const baseline = scales['y']!.getPixelForValue(0);
    const drawn = zeroGroupIndexes(
      categories.length,
      shown.map((dataset) => dataset.data),
    ).map((index) => ({
      category: String(categories[index]),
      text: zeroGroupText(groupWidth),
      x: Math.round(scales['x']!.getPixelForValue(index)),
      y: Math.round(baseline - 3),
    }));
    ctx.save();
    ctx.fillStyle = '#4b5563';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    for (const label of drawn) ctx.fillText(label.text, label.x, label.y);
    ctx.restore();
    chart.canvas.dataset['zeroGroups'] = JSON.stringify(drawn);
  },
};

/**
 * The means of one metric: a group of bars per setting, one bar per rule. Loaded with import()
 * once the batch is done, so chart.js never delays the first outcome. The table beside it is the
 * accessible form of the same numbers.
 */
export function drawMeansChart(
  canvas: HTMLCanvasElement,
  rows: readonly MeansRow[],
  metric: MetricName,
  metricLabel: string,
  previous?: Chart,
): Chart {
  previous?.destroy();
  const rules = RULES.filter((rule) => rows.some((row) => row.rule === rule.id));
  return new Chart(canvas, {
    type: 'bar',
    data: {
      labels: BATCH_SETTINGS.map((setting) => setting.label),
      datasets: rules.map((rule) => ({
        label: rule.label,
        data: BATCH_SETTINGS.map(
          (setting) => findRow(rows, setting.id, rule.id)?.mean[metric] ?? 0,
        ),
        backgroundColor: RULE_COLORS[rule.id],
        borderWidth: 0,
      })),
    },
    plugins: [zeroGroupLabels],
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {
        legend: { position: 'bottom', labels: { boxWidth: 12, color: '#1f2937' } },
        tooltip: {
          callbacks: { label: (item) => `${item.dataset.label}: ${Number(item.raw).toFixed(3)}` },
        },
      },
      scales: {
        x: {
          ticks: { color: '#374151', maxRotation: 60, autoSkip: false, font: { size: 11 } },
          grid: { display: false },
        },
        y: {
          beginAtZero: true,
          title: { display: true, text: `mean ${metricLabel.toLowerCase()}`, color: '#374151' },
          ticks: { color: '#374151' },
        },
      },
    },
  });
}
