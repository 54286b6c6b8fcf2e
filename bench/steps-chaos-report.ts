import { KILL_KINDS, STEP_NAMES } from './steps-chaos-protocol.js';
import type { StepsChaosResult } from './steps-chaos-run.js';

/** The printout: the setup, kills by kind, the payment faults, the counts, PASS or FAIL. */
export function formatStepsChaos(result: StepsChaosResult): string {
  const { options: o, verdict: v, payment: p } = result;
  const killsOf = (kind: string, step: string | null) =>
    result.kills.filter((k) => k.kind === kind && (step === null || k.step === step)).length;
  const killLines = KILL_KINDS.map((kind) => {
    const total = killsOf(kind, null);
    const bySteps =
      kind === 'before-receipt'
        ? ''
        : ` (${STEP_NAMES.map((step) => `${step} ${killsOf(kind, step)}`).join(', ')})`;
    return `    ${kind.padEnd(15)}${String(total).padStart(5)}${bySteps}`;
  });
  const once = (label: string, c: StepsChaosResult['verdict']['charges']) =>
    `  ${label.padEnd(16)}${String(c.total).padStart(6)}  exactly one: ${c.one}/${v.requests}, none: ${c.none}, more: ${c.more}`;
  const lines = [
    `bench/steps-chaos: ${o.requests} checkouts of 3 steps (charge, order, email intent) on two servers, one PostgreSQL`,
    `  seed ${o.seed}, ${o.concurrency} in flight, oncely's client with jitter; payment mock: ${pct(o.payment.error)} 503, ${pct(o.payment.timeout)} timeouts`,
    `  time ${(result.elapsedMs / 1000).toFixed(1)} s; server lives ${result.lives}; client attempts ${result.attempts} (${result.attempts - o.requests} retries)`,
    `  attempts by answer: ${[...result.answers].map(([answer, n]) => `${answer} ${n}`).join(', ')}`,
    `  SIGKILLs by step boundary (${result.kills.length}; planned ${o.each} of each kind, ${result.plannedLeft} not reached):`,
    ...killLines,
    `  payment calls ${p.calls}: 503 ${p.errors.before} before charging + ${p.errors.after} after; timeouts ${p.timeouts.before} before + ${p.timeouts.after} after`,
    `  answered 201     ${String(v.answered).padStart(6)}/${v.requests}`,
    once('charges', v.charges),
    `  charged under more than one derived key: ${v.manyKeys}`,
    once('orders', v.orders),
    once('email intents', v.emails),
    `  replay got the same final body: ${v.sameBody}/${v.requests}; the body names the charge made: ${v.bodyNamesCharge}/${v.requests}`,
  ];
  if (result.crashes.length > 0) lines.push(`  deaths not planned: ${result.crashes.join('; ')}`);
  if (v.problems.length > 0) lines.push('  problems:', ...v.problems.map((p) => `    ${p}`));
  lines.push(passed(result) ? 'PASS' : 'FAIL');
  return `${lines.join('\n')}\n`;
}

/** PASS: the verdict holds, every planned kill happened, and no server died unplanned. */
export function passed(result: StepsChaosResult): boolean {
  const enough = KILL_KINDS.every(
    (kind) => result.kills.filter((k) => k.kind === kind).length >= result.options.each,
  );
  return result.verdict.pass && enough && result.crashes.length === 0;
}

const pct = (rate: number): string => `${(rate * 100).toFixed(1)}%`;
