import { formatHit } from '../receivers/hook/format-hit.js';
import type { HookHit } from '../receivers/hook/hook-service.js';
import { NAIVE_RULES, ONCELY_RULES, type HookLabScenarioResult } from './hook-lab.js';

/** Width of the left (naive) column. */
const LEFT = 48;
/** A run of identical answers longer than this is folded to its first and last hit. */
const FOLD_AFTER = 4;

/** The lab's printout: per scenario, both hit lists side by side, then arrivals and completions. */
export function formatHookLab(results: readonly HookLabScenarioResult[]): string {
  const lines: string[] = [
    'oncely lab hook: the hostile receiver of the webhook storm (docs/origins.md) against two clients (real sockets, virtual clock)',
    `  naive:  ${NAIVE_RULES}`,
    `  oncely: ${ONCELY_RULES}`,
  ];
  for (const [i, r] of results.entries()) {
    lines.push('', `${i + 1}. ${r.title}: script ${r.script}`, `   ${r.explains}`);
    lines.push(
      row('naive client', 'oncely client'),
      row('-'.repeat(LEFT - 4), '-'.repeat(LEFT - 4)),
    );
    const left = hitLines(r.naive.hits);
    const right = hitLines(r.oncely.hits);
    for (let k = 0; k < Math.max(left.length, right.length); k++)
      lines.push(row(left[k] ?? '', right[k] ?? ''));
    lines.push(row(countLine(r.naive.counts), countLine(r.oncely.counts)));
    lines.push(`    naive says:  ${r.naive.verdict}`, `    oncely says: ${r.oncely.verdict}`);
  }
  const width = Math.max(...results.map((r) => r.title.length)) + 4;
  lines.push(
    '',
    `${'summary'.padEnd(width + 2)}${'naive arrivals/completions'.padEnd(30)}oncely arrivals/completions/replays`,
  );
  for (const r of results) {
    const n = r.naive.counts;
    const o = r.oncely.counts;
    lines.push(
      `  ${r.title.padEnd(width)}${`${n.arrivals} / ${n.completions}`.padEnd(30)}${o.arrivals} / ${o.completions} / ${o.replays}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function row(left: string, right: string): string {
  return `    ${left.padEnd(LEFT - 4)}| ${right}`.trimEnd();
}

function countLine(c: { arrivals: number; completions: number; replays: number }): string {
  return `arrivals ${c.arrivals}, completions ${c.completions}${c.replays > 0 ? `, replays ${c.replays}` : ''}`;
}

/** Hit lines, compact, with long runs of the same answer folded so the two columns stay readable. */
function hitLines(hits: readonly HookHit[]): string[] {
  const origin = hits[0]?.at ?? 0;
  const out: string[] = [];
  for (let i = 0; i < hits.length; ) {
    let j = i;
    while (j + 1 < hits.length && sameAnswer(hits[i]!, hits[j + 1]!)) j++;
    const run = j - i + 1;
    if (run > FOLD_AFTER) {
      out.push(formatHit(hits[i]!, origin, { compact: true }));
      out.push(`  ... ${run - 2} more ${hits[i]!.status ?? '---'} ${hits[i]!.answer} ...`);
      out.push(formatHit(hits[j]!, origin, { compact: true }));
    } else {
      for (let k = i; k <= j; k++) out.push(formatHit(hits[k]!, origin, { compact: true }));
    }
    i = j + 1;
  }
  return out;
}

function sameAnswer(a: HookHit, b: HookHit): boolean {
  return a.status === b.status && a.answer === b.answer && a.key === b.key;
}
