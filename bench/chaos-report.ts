/**
 * bench/chaos's table: one row per fault kind (the intents recorded while it was the latest fault
 * are its intents), a row for the intents before the first fault, and one summary line.
 */
import type { FaultKind } from './chaos-faults.js';
import type { ChaosResult } from './chaos-run.js';

interface Row {
  injected: number;
  survived: number;
  intents: number;
  effects: number;
  duplicates: number;
  lost: number;
  recoveries: number[];
}

const COLUMNS = [
  ['fault', 15],
  ['injected', 8],
  ['survived', 8],
  ['intents', 8],
  ['effects', 8],
  ['duplicates', 10],
  ['lost', 5],
  ['recover p50', 11],
  ['recover p99', 11],
] as const;

export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function rowsOf(result: ChaosResult): Map<FaultKind | 'before faults', Row> {
  const rows = new Map<FaultKind | 'before faults', Row>();
  const row = (name: FaultKind | 'before faults'): Row => {
    let found = rows.get(name);
    if (!found) {
      found = {
        injected: 0,
        survived: 0,
        intents: 0,
        effects: 0,
        duplicates: 0,
        lost: 0,
        recoveries: [],
      };
      rows.set(name, found);
    }
    return found;
  };
  row('before faults');
  for (const fault of result.faults) {
    const r = row(fault.kind);
    r.injected++;
    if (fault.recoveryMs !== undefined && fault.violations.length === 0) r.survived++;
    if (fault.recoveryMs !== undefined) r.recoveries.push(fault.recoveryMs);
  }
  for (const [key, verdict] of result.verdict.intents) {
    const phase = result.phaseOf.get(key) ?? -1;
    const r = row(phase < 0 ? 'before faults' : result.faults[phase]!.kind);
    r.intents++;
    r.effects += verdict.effects;
    r.duplicates += Math.max(0, verdict.effects - 1);
    if (!verdict.delivered || verdict.effects === 0) r.lost++;
  }
  return rows;
}

const ms = (value: number | undefined): string =>
  value === undefined ? '-' : `${Math.round(value)} ms`;

export function formatChaosReport(result: ChaosResult): string {
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(COLUMNS[i]![1]) : cell.padStart(COLUMNS[i]![1])))
      .join('  ');
  const lines = [
    line(COLUMNS.map(([name]) => name)),
    line(COLUMNS.map(([, width]) => '-'.repeat(width))),
  ];
  for (const [name, r] of rowsOf(result)) {
    const sorted = [...r.recoveries].sort((a, b) => a - b);
    const isFault = name !== 'before faults';
    lines.push(
      line([
        name,
        isFault ? String(r.injected) : '-',
        isFault ? String(r.survived) : '-',
        String(r.intents),
        String(r.effects),
        String(r.duplicates),
        String(r.lost),
        ms(percentile(sorted, 50)),
        ms(percentile(sorted, 99)),
      ]),
    );
  }
  const { verdict } = result;
  const seconds = result.elapsedMs / 1000;
  lines.push(
    '',
    `${result.failures.length > 0 ? 'FAIL' : result.faults.some((f) => f.slow) ? 'SLOW' : 'PASS'}: ${result.intents} intents in ${seconds.toFixed(1)} s (${(result.intents / seconds).toFixed(0)} intents/s), ${result.faults.length} faults, ${verdict.effects} effect rows, ${verdict.duplicates} duplicates, ${verdict.lost} lost, ${verdict.effectsWithoutReceipt} effects without receipt, ${verdict.receiptsWithoutEffect} receipts without effect, ${result.faults.reduce((n, f) => n + f.probes, 0)} probes, ${result.faults.reduce((n, f) => n + f.violations.length, 0)} violations`,
  );
  const statuses = [...verdict.attemptStatuses].map(([status, n]) => `${status}: ${n}`).join(', ');
  const cpuS = (result.cpu.harnessCpuMs + result.cpu.postgresCpuMs) / 1000;
  lines.push(
    `attempts by status: ${statuses}`,
    `CPU: ${(result.cpu.harnessCpuMs / 1000).toFixed(1)} s harness + receivers + workers, ${(result.cpu.postgresCpuMs / 1000).toFixed(1)} s PostgreSQL: ${((cpuS * 1000) / result.intents).toFixed(1)} ms per intent (about ${(result.intents / cpuS).toFixed(0)} intents/s per free core)`,
  );
  for (const failure of result.failures.slice(0, 20)) lines.push(`  ${failure}`);
  for (const fault of result.faults)
    if (fault.slow !== undefined) lines.push(`  slow: ${fault.slow}`);
  return lines.join('\n');
}
