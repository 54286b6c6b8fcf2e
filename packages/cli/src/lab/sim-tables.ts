import {
  BATCH_SETTINGS,
  METRIC_NAMES,
  METRIC_TITLES,
  ruleById,
  type ClaimResult,
  type FigureComparison,
  type MeansRow,
  type WorldOutcome,
  type WorldParams,
} from '../sim/index.js';

/**
 * A plain text table, columns two spaces apart. `align` has one letter per column, `l` or `r`;
 * by default the first column is left-aligned and the others (numbers) right-aligned.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  indent = '',
  align = 'l',
): string {
  const widths = headers.map((header, c) =>
    Math.max(header.length, ...rows.map((row) => (row[c] ?? '').length)),
  );
  const left = (c: number): boolean => (align[c] ?? 'r') === 'l';
  const line = (cells: readonly string[]): string =>
    indent +
    cells
      .map((cell, c) => (left(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** One line naming every parameter of a world, for the head of `sim run`. */
export function formatParams(p: WorldParams): string {
  return [
    `seed ${p.seed}`,
    `${p.jobs} jobs`,
    `horizon ${p.horizonTicks}`,
    `${p.sendsPerTick} send/tick`,
    `credits ${p.credits} (send ${p.sendCost}, keyed ${p.keyedSendCost})`,
    `request loss ${p.requestLoss}`,
    `receipt loss ${p.receiptLoss}`,
    `delay 1-${p.maxDelayTicks}`,
    `retry-after ${p.retryAfterTicks} (cap ${p.maxRetryAfterTicks})`,
    `attempts ${p.maxAttempts ?? 'unlimited'}`,
    `retention ${p.retentionTicks === null ? 'whole run' : `${p.retentionTicks} ticks`}`,
    `forget keys ${p.forgetKeysAt === null ? 'never' : `at ${p.forgetKeysAt}`}`,
  ].join(', ');
}

/** The per-rule metrics of one world: whole numbers, one row per rule. */
export function formatRunTable(outcomes: readonly WorldOutcome[]): string {
  const rows = outcomes.map((o) => [
    ruleById(o.rule)?.label ?? o.rule,
    ...METRIC_NAMES.map((name) => String(o.metrics[name])),
  ]);
  return formatTable(['Rule', ...METRIC_NAMES.map((name) => METRIC_TITLES[name])], rows);
}

/** A trace as aligned text lines: tick, event, job, attempt. */
export function formatTraceText(outcome: WorldOutcome): string {
  const trace = outcome.trace ?? [];
  const rows = trace.map((e) => [String(e.tick), e.kind, String(e.job), String(e.attempt)]);
  return formatTable(['Tick', 'Event', 'Job', 'Attempt'], rows, '  ', 'rlrr');
}

/** The means of a batch, one block per setting, three decimals. */
export function formatMeansTables(rows: readonly MeansRow[]): string {
  const settings = [...new Set(rows.map((row) => row.setting))];
  return settings
    .map((setting) => {
      const label = BATCH_SETTINGS.find((s) => s.id === setting)?.label ?? setting;
      const block = rows.filter((row) => row.setting === setting);
      const body = block.map((row) => [
        ruleById(row.rule)?.label ?? row.rule,
        ...METRIC_NAMES.map((name) => row.mean[name].toFixed(3)),
      ]);
      return `${label} (${setting}, ${block[0]?.worlds ?? 0} worlds)\n${formatTable(
        ['  Rule', ...METRIC_NAMES.map((name) => METRIC_TITLES[name])],
        body.map(([first, ...rest]) => [`  ${first}`, ...rest]),
      )}`;
    })
    .join('\n\n');
}

/** The simulator write-up's figures beside ours (docs/origins.md), with the difference and its size in standard errors. */
export function formatPublishedComparison(comparisons: readonly FigureComparison[]): string {
  const rows = comparisons.map((c) => [
    c.setting,
    ruleById(c.rule)?.label ?? c.rule,
    c.metric,
    String(c.value),
    c.ours.toFixed(3),
    signed(c.difference),
    c.z === null ? '-' : signed(c.z, 2),
  ]);
  return formatTable(
    ['Setting', 'Rule', 'Metric', 'Published', 'Ours', 'Difference', 'z'],
    rows,
    '  ',
    'lll',
  );
}

/** Each claim as `reproduced` or `NOT REPRODUCED`, with the numbers behind it. */
export function formatClaims(claims: readonly ClaimResult[]): string {
  return claims
    .map(
      (c) =>
        `  ${(c.reproduced ? 'reproduced' : 'NOT REPRODUCED').padEnd(14)}  ${c.text} (${c.detail})`,
    )
    .join('\n');
}

function signed(value: number, digits = 3): string {
  if (Number.isNaN(value)) return 'missing';
  const text = value.toFixed(digits);
  return value > 0 && Number(text) !== 0 ? `+${text}` : text.replace(/^-(0\.0+)$/, '$1');
}
