/**
 * bench/anchors' printout, one table per effect durability: one line per variant (new-key and
 * replay req/s with their spread and p99, the durability, the dedupe check), then each oncely row
 * divided by every other middleware of its table and by the unguarded app at the same durability,
 * with whether oncely's durability is stronger, equal or weaker, and a plain verdict.
 */
import { describeDedupe, type DedupeResult } from './anchors-check.js';
import type { LoadRun } from './anchors-load.js';
import {
  DURABILITY_RANK,
  TABLE_TITLES,
  TABLES,
  type Durability,
  type TableDurability,
  type Variant,
} from './anchors-variants.js';

export interface AnchorsRow {
  readonly variant: Variant;
  /** The table: what every effect in it was set to survive. */
  readonly table: TableDurability;
  readonly durability: Durability;
  readonly fresh?: LoadRun | undefined;
  readonly replay?: LoadRun | undefined;
  readonly dedupe?: DedupeResult | undefined;
}

export interface Comparison {
  readonly oncely: AnchorsRow;
  readonly other: AnchorsRow;
  readonly newRatio: number;
  readonly replayRatio: number;
  readonly durability: 'stronger' | 'equal' | 'weaker';
  /** Faster on both, at equal or stronger durability. */
  readonly ahead: boolean;
}

const whole = (n: number): string =>
  Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–';
const spreadOf = (run: LoadRun | undefined): string =>
  run?.spread ? `${whole(run.spread[0])}–${whole(run.spread[1])}` : '';
const ratio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');

export function compare(oncely: AnchorsRow, other: AnchorsRow): Comparison {
  const rps = (run: LoadRun | undefined): number => run?.requestsPerSecond ?? Number.NaN;
  const newRatio = rps(oncely.fresh) / rps(other.fresh);
  const replayRatio = rps(oncely.replay) / rps(other.replay);
  const difference = DURABILITY_RANK[oncely.durability] - DURABILITY_RANK[other.durability];
  const durability = difference > 0 ? 'stronger' : difference === 0 ? 'equal' : 'weaker';
  return {
    oncely,
    other,
    newRatio,
    replayRatio,
    durability,
    ahead: newRatio > 1 && replayRatio > 1 && durability !== 'weaker',
  };
}

function cell(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** Every table given rows, in TABLES' order, each under its heading. */
export function formatAnchors(rows: readonly AnchorsRow[]): string {
  return TABLES.map((table) => rows.filter((row) => row.table === table))
    .filter((tableRows) => tableRows.length > 0)
    .map((tableRows) => `${TABLE_TITLES[tableRows[0]!.table]}\n\n${formatTable(tableRows)}`)
    .join('\n');
}

/** One table: its rows, then each oncely row ÷ the others and ÷ the floor of the same table. */
function formatTable(rows: readonly AnchorsRow[]): string {
  const out: string[] = [];
  const head = [
    cell('variant', 26),
    cell('durability', 10),
    cell('new req/s', 9, true),
    cell('spread', 13),
    cell('p99 ms', 7, true),
    cell('cpu µs', 6, true),
    cell('replay req/s', 12, true),
    cell('spread', 15),
    cell('p99 ms', 7, true),
    cell('cpu µs', 6, true),
    'dedupe check',
  ];
  out.push(head.join('  '));
  out.push(head.map((h) => '-'.repeat(h.length)).join('  '));
  for (const row of rows) {
    out.push(
      [
        cell(row.variant.label, 26),
        cell(row.durability, 10),
        cell(whole(row.fresh?.requestsPerSecond ?? Number.NaN), 9, true),
        cell(spreadOf(row.fresh), 13),
        cell(row.fresh ? row.fresh.p99Ms.toFixed(0) : '–', 7, true),
        cell(whole(row.fresh?.cpuMicrosPerRequest ?? Number.NaN), 6, true),
        cell(whole(row.replay?.requestsPerSecond ?? Number.NaN), 12, true),
        cell(spreadOf(row.replay), 15),
        cell(row.replay ? row.replay.p99Ms.toFixed(0) : '–', 7, true),
        cell(whole(row.replay?.cpuMicrosPerRequest ?? Number.NaN), 6, true),
        row.variant.reference !== undefined
          ? row.variant.reference
          : row.dedupe
            ? describeDedupe(row.dedupe)
            : '–',
      ].join('  '),
    );
  }
  const oddities = rows.flatMap((row) => oddRuns(row));
  if (oddities.length > 0) out.push('', ...oddities);

  const others = rows.filter((r) => !r.variant.oncely && r.variant.reference === undefined);
  const floor = rows.find((r) => r.variant.id === 'none');
  const alone = rows.find((r) => r.variant.id === 'bare-express');
  for (const oncely of rows.filter((r) => r.variant.oncely)) {
    if (others.length === 0 && !floor && !alone) break;
    out.push('', `${oncely.variant.label} (${oncely.durability}) ÷ the other rows of its table:`);
    if (others.length > 0) out.push(...comparisonLines(oncely, others));
    if (floor) out.push(floorLine(oncely, floor));
    if (alone) out.push(aloneLine(oncely, alone));
  }
  return `${out.join('\n')}\n`;
}

/** oncely ÷ each other middleware of its table, then a verdict. */
function comparisonLines(oncely: AnchorsRow, others: readonly AnchorsRow[]): string[] {
  const comparisons = others.map((other) => compare(oncely, other));
  const lines = comparisons.map(
    (c) =>
      `  ÷ ${cell(c.other.variant.label, 26)} new keys ${cell(ratio(c.newRatio), 7, true)}   replays ${cell(ratio(c.replayRatio), 7, true)}   durability ${cell(c.durability, 8)} (${c.other.durability})   ${c.ahead ? 'ahead' : `NOT ahead${behind(c)}`}`,
  );
  const lagging = comparisons.filter((c) => !c.ahead);
  lines.push(
    lagging.length === 0
      ? `  ${oncely.variant.label}: ahead of every other middleware on new keys and on replays, at equal or stronger durability.`
      : `  ${oncely.variant.label}: not ahead of ${lagging.map((c) => c.other.variant.label).join(', ')}.`,
  );
  return lines;
}

type RunField = 'requestsPerSecond' | 'cpuMicrosPerRequest';

/** One row's run ÷ another's, in one mode, on one field (NaN when either has no run). */
function runRatio(a: AnchorsRow, b: AnchorsRow, mode: 'fresh' | 'replay', field: RunField): number {
  return (a[mode]?.[field] ?? Number.NaN) / (b[mode]?.[field] ?? Number.NaN);
}

/** oncely ÷ the unguarded app of the same table: req/s, and the server's CPU per response. */
function floorLine(oncely: AnchorsRow, floor: AnchorsRow): string {
  const both = (field: RunField): string =>
    `new keys ${ratio(runRatio(oncely, floor, 'fresh', field))}, replays ${ratio(runRatio(oncely, floor, 'replay', field))}`;
  return `  ÷ no guard (floor, ${floor.durability}): req/s ${both('requestsPerSecond')}; server CPU per response ${both('cpuMicrosPerRequest')} (the floor runs the effect on every request)`;
}

/** oncely's replays ÷ Express answering a constant: a replay measured against Express's own cost. */
function aloneLine(oncely: AnchorsRow, alone: AnchorsRow): string {
  const rps = runRatio(oncely, alone, 'replay', 'requestsPerSecond');
  const cpu = runRatio(oncely, alone, 'replay', 'cpuMicrosPerRequest');
  return `  ÷ Express alone (no effect): replays req/s ${ratio(rps)}, server CPU per response ${ratio(cpu)} (its route answers a constant through res.json: what a replay after express.json costs without any middleware)`;
}

function behind(c: Comparison): string {
  const parts: string[] = [];
  if (!(c.newRatio > 1)) parts.push('new keys');
  if (!(c.replayRatio > 1)) parts.push('replays');
  if (c.durability === 'weaker') parts.push('durability');
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** Runs whose counts say something went wrong: failures under load, or effects run on replay. */
function oddRuns(row: AnchorsRow): string[] {
  const lines: string[] = [];
  for (const run of [row.fresh, row.replay]) {
    if (!run) continue;
    const failed = Object.entries(run.statuses).filter(([status]) => !status.startsWith('2'));
    if (failed.length > 0 || run.errors > 0)
      lines.push(
        `  ${row.variant.label}, ${run.mode}: non-2xx ${failed.map(([s, n]) => `${s}×${n}`).join(' ') || 'none'}${run.errors > 0 ? `, socket errors ×${run.errors}` : ''}`,
      );
    if (run.mode === 'replay' && run.effectRows > 0 && row.variant.reference === undefined)
      lines.push(
        `  ${row.variant.label}, replay: the effect ran ${run.effectRows} more time(s) for a key already answered`,
      );
  }
  return lines;
}
