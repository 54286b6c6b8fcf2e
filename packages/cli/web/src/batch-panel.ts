import type { Chart } from 'chart.js';
import {
  BATCH_SETTINGS,
  METRIC_NAMES,
  METRIC_TITLES,
  RULES,
  findRow,
  ruleById,
  type MetricName,
} from '@oncely/cli/sim/index.js';
import type { BatchFiles } from '@oncely/cli/sim/batch-summary.js';
import { MAX_BATCH_SEEDS, type BatchReply } from './batch-protocol.js';
import { byId, h } from './dom.js';
import { zeroGroupIndexes } from './zero-groups.js';

type Done = Extract<BatchReply, { type: 'done' }>;

/** The download links, by file name: what `oncely sim batch --out` writes. */
const DOWNLOADS: readonly {
  readonly file: keyof BatchFiles;
  readonly id: string;
  readonly type: string;
  readonly label: string;
}[] = [
  {
    file: 'outcomes.jsonl',
    id: 'download-jsonl',
    type: 'application/x-ndjson',
    label: 'every outcome, JSON lines',
  },
  { file: 'outcomes.csv', id: 'download-csv', type: 'text/csv', label: 'every outcome, CSV' },
  { file: 'means.csv', id: 'download-means', type: 'text/csv', label: 'means and spreads, CSV' },
  {
    file: 'summary.json',
    id: 'download-summary',
    type: 'application/json',
    label: 'summary with claims, JSON',
  },
];

/**
 * The batch section: runs the ten settings × every rule in a web worker, shows progress, then a
 * table of means for one metric at a time, a chart of the same, the simulator write-up's figures beside ours (docs/origins.md),
 * the claims, and the files to download.
 */
export function setUpBatchPanel(): void {
  const form = byId<HTMLFormElement>('batch-form');
  const seedsInput = byId<HTMLInputElement>('batch-seeds');
  const seedsError = byId('batch-seeds-error');
  const runButton = byId<HTMLButtonElement>('run-batch');
  const progress = byId<HTMLProgressElement>('batch-progress');
  const status = byId('batch-status');
  const results = byId('batch-results');
  const metricSelect = byId<HTMLSelectElement>('batch-metric');
  const tableHolder = byId('means-table-holder');
  const canvas = byId<HTMLCanvasElement>('means-chart');
  const downloads = byId('batch-downloads');
  const comparisonHolder = byId('seed-comparison');
  const claimsHolder = byId('batch-claims');

  seedsInput.max = String(MAX_BATCH_SEEDS);
  for (const name of METRIC_NAMES)
    metricSelect.append(h('option', { value: name }, METRIC_TITLES[name]));

  let worker: Worker | undefined;
  let done: Done | undefined;
  let chart: Chart | undefined;
  let urls: string[] = [];

  const showMetric = async (): Promise<void> => {
    if (!done) return;
    const metric = metricSelect.value as MetricName;
    tableHolder.replaceChildren(meansTable(done, metric));
    const { drawMeansChart } = await import('./batch-chart.js');
    chart = drawMeansChart(canvas, done.means, metric, METRIC_TITLES[metric], chart);
    const { means } = done;
    const zero = zeroGroupIndexes(
      BATCH_SETTINGS.length,
      RULES.filter((rule) => means.some((row) => row.rule === rule.id)).map((rule) =>
        BATCH_SETTINGS.map((setting) => findRow(means, setting.id, rule.id)?.mean[metric]),
      ),
    ).map((i) => BATCH_SETTINGS[i]!.label);
    canvas.setAttribute(
      'aria-label',
      `Bar chart of mean ${METRIC_TITLES[metric].toLowerCase()} per setting and rule${zero.length ? `; every rule 0 at ${zero.join(', ')}` : ''}; the table above holds the same numbers.`,
    );
  };
  metricSelect.addEventListener('change', () => void showMetric());

  const finish = (reply: Done): void => {
    done = reply;
    for (const url of urls) URL.revokeObjectURL(url);
    urls = DOWNLOADS.map((d) =>
      URL.createObjectURL(new Blob([reply.files[d.file]], { type: d.type })),
    );
    downloads.replaceChildren(
      ...DOWNLOADS.map((d, i) =>
        h(
          'li',
          {},
          h('a', { id: d.id, href: urls[i]!, download: d.file }, d.file),
          ` — ${d.label} (${formatBytes(reply.files[d.file].length)})`,
        ),
      ),
    );
    comparisonHolder.replaceChildren(comparisonTable(reply));
    claimsHolder.replaceChildren(claimsList(reply));
    results.hidden = false;
    status.textContent = `Done: ${reply.worlds.toLocaleString('en')} worlds, ${reply.outcomeCount.toLocaleString('en')} outcomes in ${Math.round(reply.elapsedMs)} ms (seeds 0–${reply.seeds - 1}).`;
    results.dataset['seeds'] = String(reply.seeds);
    void showMetric().then(() => results.setAttribute('data-ready', 'true'));
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const seeds = Number(seedsInput.value);
    const valid = Number.isInteger(seeds) && seeds >= 1 && seeds <= MAX_BATCH_SEEDS;
    seedsInput.toggleAttribute('aria-invalid', !valid);
    seedsError.hidden = valid;
    seedsError.textContent = valid
      ? ''
      : `Worlds per setting: expected an integer from 1 to ${MAX_BATCH_SEEDS}.`;
    if (!valid) return;
    worker?.terminate();
    worker = new Worker(new URL('./batch-worker.js', import.meta.url), {
      type: 'module',
      name: 'oncely-batch',
    });
    results.removeAttribute('data-ready');
    progress.value = 0;
    progress.max = seeds * BATCH_SETTINGS.length;
    progress.hidden = false;
    runButton.disabled = true;
    status.textContent = `Running ${BATCH_SETTINGS.length} settings × ${seeds} seeds × ${RULES.length} rules…`;
    worker.onmessage = (message: MessageEvent<BatchReply>) => {
      const reply = message.data;
      if (reply.type === 'progress') {
        progress.value = reply.done;
        progress.textContent = `${Math.round((100 * reply.done) / reply.total)}%`;
        return;
      }
      runButton.disabled = false;
      worker?.terminate();
      worker = undefined;
      if (reply.type === 'error') status.textContent = `The batch failed: ${reply.message}`;
      else finish(reply);
    };
    worker.onerror = (event) => {
      runButton.disabled = false;
      status.textContent = `The batch worker failed: ${event.message}`;
    };
    worker.postMessage({ type: 'run', seeds });
  });
}

/** Settings down, rules across, one metric's mean per cell (sd and range in the title). */
function meansTable(done: Done, metric: MetricName): HTMLTableElement {
  const rules = RULES.filter((rule) => done.means.some((row) => row.rule === rule.id));
  return h(
    'table',
    { id: 'means-table', class: 'numbers stack-narrow', 'data-metric': metric },
    h(
      'caption',
      {},
      `Mean ${METRIC_TITLES[metric].toLowerCase()} over seeds 0–${done.seeds - 1}, per setting and rule`,
    ),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Setting'),
        ...rules.map((rule) => h('th', { scope: 'col' }, rule.label)),
      ),
    ),
    h(
      'tbody',
      {},
      ...BATCH_SETTINGS.map((setting) =>
        h(
          'tr',
          { 'data-setting': setting.id },
          h('th', { scope: 'row' }, setting.label),
          ...rules.map((rule) => {
            const row = findRow(done.means, setting.id, rule.id);
            if (!row) return h('td', { 'data-label': rule.label }, '—');
            return h(
              'td',
              {
                'data-setting': setting.id,
                'data-rule': rule.id,
                'data-metric': metric,
                'data-label': rule.label,
                title: `sd ${row.sd[metric].toFixed(3)}, min ${row.min[metric]}, max ${row.max[metric]}`,
              },
              row.mean[metric].toFixed(3),
            );
          }),
        ),
      ),
    ),
  );
}

function comparisonTable(done: Done): HTMLTableElement {
  const settingLabel = (id: string): string => BATCH_SETTINGS.find((s) => s.id === id)?.label ?? id;
  const heads = ['Figure', 'Published', 'Ours', 'z'];
  return h(
    'table',
    { class: 'numbers stack-narrow', id: 'seed-comparison-table' },
    h(
      'caption',
      {},
      'The simulator write-up’s published means beside ours (|z| below 2 is sampling noise: the worlds differ)',
    ),
    h('thead', {}, h('tr', {}, ...heads.map((t) => h('th', { scope: 'col' }, t)))),
    h(
      'tbody',
      {},
      ...done.comparison.map((c) =>
        h(
          'tr',
          {},
          h(
            'th',
            { scope: 'row' },
            `${settingLabel(c.setting)} · ${ruleById(c.rule)?.label ?? c.rule} · ${METRIC_TITLES[c.metric].toLowerCase()}`,
          ),
          h('td', { 'data-label': heads[1] }, String(c.value)),
          h('td', { 'data-label': heads[2] }, Number.isNaN(c.ours) ? '—' : c.ours.toFixed(3)),
          h('td', { 'data-label': heads[3] }, c.z === null ? '—' : c.z.toFixed(2)),
        ),
      ),
    ),
  );
}

function claimsList(done: Done): HTMLElement {
  return h(
    'ul',
    { class: 'claims' },
    ...done.claims.map((claim) =>
      h(
        'li',
        { class: claim.reproduced ? 'claim-ok' : 'claim-not', 'data-claim': claim.id },
        h('strong', {}, claim.reproduced ? 'Reproduced' : 'Not reproduced'),
        `: ${claim.text} `,
        h('span', { class: 'help' }, `(${claim.detail})`),
      ),
    ),
  );
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(0)} KiB`;
}
