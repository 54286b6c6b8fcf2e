/**
 * bench/outbox's printout: per contender, medians over the rounds with the lowest and highest
 * round beside them, and each oncely row's ratio to the best competitor of its kind (HTTP rows
 * against graphile-worker + fetch and pg-boss + fetch; no-op rows against graphile-worker's no-op
 * jobs), by deliveries per sender CPU-second.
 */
import { CONTENDERS, engineOf, type Contender } from './outbox-protocol.js';
import type { DeliveryCheck, DrainRun, OutboxResult } from './outbox-run.js';

export const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The value at quantile q (0..1) of `xs`, nearest rank. */
export const quantile = (xs: readonly number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
};

export interface ContenderSummary {
  readonly contender: Contender;
  /** Sender CPU µs per delivered intent: median, lowest, highest round. */
  readonly cpuUs: readonly [number, number, number];
  /** Of which in PostgreSQL backends (median µs). */
  readonly databaseUs: number;
  readonly perCpuSecond: number;
  readonly wallPerS: readonly [number, number, number];
  /** Deliveries per CPU-second over the best competitor's; undefined for a competitor. */
  readonly ratio: number | undefined;
  readonly rival: Contender | undefined;
}

const spreadOf = (xs: readonly number[]): [number, number, number] => [
  median(xs),
  Math.min(...xs),
  Math.max(...xs),
];

export function summarize(drains: readonly DrainRun[]): ContenderSummary[] {
  const contenders = CONTENDERS.filter((c) => drains.some((d) => d.contender === c));
  const base = contenders.map((contender) => {
    const runs = drains.filter((d) => d.contender === contender);
    const cpuUs = spreadOf(runs.map((d) => d.cpuUs / d.intents));
    return {
      contender,
      cpuUs,
      databaseUs: median(runs.map((d) => d.raw.databaseUs / d.intents)),
      perCpuSecond: 1e6 / cpuUs[0],
      wallPerS: spreadOf(runs.map((d) => (d.intents * 1000) / d.wallMs)),
    };
  });
  return base.map((row) => {
    const { engine, noop } = engineOf(row.contender);
    const oncely = engine.startsWith('oncely');
    const rivals = base
      .filter((r) => !engineOf(r.contender).engine.startsWith('oncely'))
      .filter((r) => engineOf(r.contender).noop === noop)
      .sort((a, b) => b.perCpuSecond - a.perCpuSecond);
    const best = oncely ? rivals[0] : undefined;
    return {
      ...row,
      ratio: best && row.perCpuSecond / best.perCpuSecond,
      rival: best?.contender,
    };
  });
}

const int = (n: number): string =>
  Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–';
const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(n < 10 ? 1 : 0) : '–');

const LABEL: Record<Contender, string> = {
  'oncely-sqlite': 'oncely, SQLite journal',
  'oncely-postgres': 'oncely, PostgreSQL journal',
  'graphile-worker': 'graphile-worker + fetch',
  'pg-boss': 'pg-boss + fetch',
  'oncely-sqlite-noop': 'oncely, SQLite, no-op sends',
  'oncely-postgres-noop': 'oncely, PostgreSQL, no-op sends',
  'graphile-worker-noop': 'graphile-worker, no-op jobs',
};

export function formatOutbox(result: OutboxResult): string {
  const rows = summarize(result.drains);
  const lines = [
    '| sender | CPU µs per delivery (PostgreSQL) | deliveries per CPU-s | ÷ best rival | wall deliveries/s | low load p50 / p99 ms | low load from commit p50 / p99 ms | saturated p50 / p99 ms |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const pair = (xs: readonly number[] | undefined): string =>
    xs && xs.length > 0 ? `${ms(quantile(xs, 0.5))} / ${ms(quantile(xs, 0.99))}` : '–';
  for (const row of rows) {
    const latency = result.latency.get(row.contender);
    lines.push(
      `| ${LABEL[row.contender]} | ${int(row.cpuUs[0])} (${int(row.cpuUs[1])}–${int(row.cpuUs[2])}; ${int(row.databaseUs)}) | ${int(row.perCpuSecond)} | ${row.ratio === undefined ? '' : `**${row.ratio.toFixed(2)}** (${row.rival})`} | ${int(row.wallPerS[0])} (${int(row.wallPerS[1])}–${int(row.wallPerS[2])}) | ${pair(latency?.low)} | ${pair(latency?.lowFromCommit)} | ${pair(latency?.saturated)} |`,
    );
  }
  // Low load only: its worker's CPU is the recording process's (outbox-embedded.ts).
  const { embedded } = result;
  if (embedded.low.length > 0)
    lines.push(
      `| oncely, SQLite journal, worker in the recording process | – | – | | – | ${pair(embedded.low)} | ${pair(embedded.lowFromCommit)} | – |`,
    );
  return `${lines.join('\n')}\n`;
}

/** The sets not delivered exactly once (every key once, none missing): empty when all were. */
export function failedChecks(checks: readonly DeliveryCheck[]): DeliveryCheck[] {
  return checks.filter((c) => c.distinct !== c.expected || c.requests !== c.expected);
}

export function formatChecks(checks: readonly DeliveryCheck[]): string {
  const failed = failedChecks(checks);
  const intents = checks.reduce((sum, c) => sum + c.expected, 0);
  if (failed.length === 0)
    return `exactly once: ${checks.length} sets, ${int(intents)} intents, each delivered once (receiver's count; no-op rows: the worker's)\n`;
  return `NOT exactly once:\n${failed
    .map(
      (c) =>
        `  ${c.contender} ${c.set}: ${c.distinct} of ${c.expected} keys arrived, ${c.requests} requests`,
    )
    .join('\n')}\n`;
}
