import type { ClaimResult } from '../claims.js';
import { budgetClaims } from './budget-model.js';
import { retriesClosedForm } from './dependency.js';
import type { FleetModel } from './fleet-batch.js';
import type { FleetRow } from './fleet-summary.js';

/**
 * The claims a fleet batch checks, on means over seeds (docs/fleet.md says where each comes
 * from). A claim whose rows are missing from the batch is not reproduced.
 */
export function checkFleetClaims(model: FleetModel, rows: readonly FleetRow[]): ClaimResult[] {
  if (model === 'contention') return contentionClaims(rows);
  if (model === 'dependency') return dependencyClaims(rows);
  if (model === 'budget') return budgetClaims(rows);
  return overloadClaims(rows);
}

const fmt = (v: number | undefined, digits = 3): string =>
  v === undefined || Number.isNaN(v) ? 'missing' : v.toFixed(digits);

function claim(id: string, text: string, reproduced: boolean, detail: string): ClaimResult {
  return { id, text, reproduced, detail };
}

function contentionClaims(rows: readonly FleetRow[]): ClaimResult[] {
  const at = (strategy: string, n: number, metric: 'writes' | 'finishMs'): number =>
    rows.find((r) => r.strategy === strategy && r.x === n)?.values[metric] ?? Number.NaN;
  const counts = [...new Set(rows.map((r) => r.x))].sort((a, b) => a - b);
  const others = ['exponential', 'equal', 'full', 'decorrelated'];
  const n = 100;
  const claims: ClaimResult[] = [];

  const slowerSomewhere = counts.filter((c) =>
    others.some((s) => !(at('none', c, 'finishMs') < at(s, c, 'finishMs'))),
  );
  claims.push(
    claim(
      'no-backoff-finishes-first',
      'No backoff finishes first, at every client count',
      counts.length > 0 && slowerSomewhere.length === 0,
      slowerSomewhere.length === 0
        ? `${counts.length} client counts`
        : `not first at N = ${slowerSomewhere.join(', ')}`,
    ),
  );
  const quarter = counts
    .filter((c) => c >= 50)
    .map((c) => ({ c, ratio: at('none', c, 'writes') / ((c * c) / 4) }));
  claims.push(
    claim(
      'no-backoff-n-squared-over-4',
      'No backoff makes about N²/4 write calls (within 25%, N ≥ 50)',
      quarter.length > 0 && quarter.every((q) => q.ratio >= 0.75 && q.ratio <= 1.25),
      quarter.map((q) => `N ${q.c}: ${fmt(q.ratio, 2)}`).join(', ') || 'missing',
    ),
  );
  const expCalls = at('exponential', n, 'writes') / at('none', n, 'writes');
  claims.push(
    claim(
      'exponential-barely-reduces-calls',
      'Exponential without jitter barely reduces calls (≥ 0.6× no backoff, N = 100)',
      expCalls >= 0.6,
      `${fmt(expCalls, 2)}×`,
    ),
  );
  const expTime = at('exponential', n, 'finishMs') / at('none', n, 'finishMs');
  claims.push(
    claim(
      'exponential-order-of-magnitude-longer',
      'Exponential without jitter takes an order of magnitude longer (≥ 10×, N = 100)',
      expTime >= 10,
      `${fmt(expTime, 1)}×`,
    ),
  );
  for (const c of [100, 190]) {
    const full = at('full', c, 'writes');
    const equal = at('equal', c, 'writes');
    const decorrelated = at('decorrelated', c, 'writes');
    const exponential = at('exponential', c, 'writes');
    claims.push(
      claim(
        `jitter-fewest-calls-${c}`,
        `Full and equal jitter make the fewest calls, decorrelated a little more (N = ${c})`,
        Math.max(full, equal) < decorrelated &&
          decorrelated < exponential &&
          decorrelated < at('none', c, 'writes'),
        `full ${fmt(full, 0)}, equal ${fmt(equal, 0)} < decorrelated ${fmt(decorrelated, 0)} < exponential ${fmt(exponential, 0)}`,
      ),
    );
  }
  const cut =
    Math.max(at('full', n, 'writes'), at('equal', n, 'writes')) / at('exponential', n, 'writes');
  claims.push(
    claim(
      'jitter-halves-calls',
      'At 100 clients, jitter cuts calls by more than half against exponential',
      cut < 0.5,
      `${fmt(cut, 2)}× exponential's calls`,
    ),
  );
  return claims;
}

function dependencyClaims(rows: readonly FleetRow[]): ClaimResult[] {
  const row = (strategy: string, p: number, clients = 100, rate = 1000): FleetRow | undefined =>
    rows.find(
      (r) =>
        r.strategy === strategy &&
        r.x === p &&
        r.clients === clients &&
        r.totalRatePerSecond === rate,
    );
  const claims: ClaimResult[] = [];
  // 3 retries against the closed forms, in standard errors of the mean per first try.
  const checks = rows
    .filter((r) => r.strategy === 'retries' && r.totalRatePerSecond === 1000)
    .map((r) => {
      const p = r.x;
      const expected = retriesClosedForm(p);
      const tries = r.values['firstTries']! * r.seeds;
      // Attempts per first try K: P(K ≥ k) = p^(k−1), k = 1 … 4.
      let k2 = 0;
      for (let k = 1; k <= 4; k++) k2 += (2 * k - 1) * p ** (k - 1);
      const loadSe = Math.sqrt(Math.max(0, k2 - expected.load ** 2) / tries);
      const successSe = Math.sqrt((expected.success * (1 - expected.success)) / tries);
      const z = (diff: number, se: number): number =>
        se === 0 ? (diff === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.abs(diff) / se;
      return {
        p,
        zLoad: z(r.values['load']! - expected.load, loadSe),
        zSuccess: z(r.values['success']! - expected.success, successSe),
      };
    });
  const worst = Math.max(...checks.map((c) => Math.max(c.zLoad, c.zSuccess)));
  claims.push(
    claim(
      'retries-closed-form',
      '3 retries: load = (1 − p⁴)/(1 − p) and success = 1 − p⁴ within sampling error (|z| < 4 at every p)',
      checks.length > 0 && worst < 4,
      checks.length === 0
        ? 'missing'
        : `largest |z| ${fmt(worst, 2)} over ${checks.length} failure rates`,
    ),
  );
  const high = Math.max(...rows.map((r) => r.x));
  const bucket100 = row('bucket', high)?.values['load'];
  claims.push(
    claim(
      'bucket-approaches-1.1',
      `The token bucket's load approaches 1.1× at high p for 100 clients (1.05 … 1.2 at p = ${high})`,
      bucket100 !== undefined && bucket100 >= 1.05 && bucket100 <= 1.2,
      `load ${fmt(bucket100)}`,
    ),
  );
  const shared = [10, 100, 1000].map(
    (c) => row('bucket', high, c, 100)?.values['load'] ?? Number.NaN,
  );
  const retries1000 = row('retries', high, 1000, 100)?.values['load'] ?? Number.NaN;
  claims.push(
    claim(
      'bucket-drifts-to-retries',
      'As clients multiply (10, 100, 1,000 sharing 100 req/s), the bucket drifts toward 3 retries (rising; ≥ 0.85× at 1,000)',
      shared[0]! < shared[1]! && shared[1]! < shared[2]! && shared[2]! >= 0.85 * retries1000,
      `load ${shared.map((v) => fmt(v)).join(' < ')}; 3 retries ${fmt(retries1000)}`,
    ),
  );
  const breakers = rows.filter(
    (r) => r.strategy === 'breaker' && r.totalRatePerSecond === 1000 && r.x >= 0.3,
  );
  const worstBreaker = Math.max(...breakers.map((r) => r.values['load']!));
  claims.push(
    claim(
      'breaker-approaches-none',
      'The circuit breaker approaches no retries (load ≤ 1.05 for p ≥ 0.3)',
      breakers.length > 0 && worstBreaker <= 1.05,
      `largest load ${fmt(worstBreaker)} over ${breakers.length} failure rates`,
    ),
  );
  const oncely = row('oncely', high)?.values['load'];
  const retries = row('retries', high)?.values['load'];
  claims.push(
    claim(
      'oncely-below-retries',
      `oncely's defaults (3 attempts, AWS bucket) load the dependency less than 3 retries at p = ${high}`,
      oncely !== undefined && retries !== undefined && oncely < retries,
      `load ${fmt(oncely)} < ${fmt(retries)}`,
    ),
  );
  return claims;
}

function overloadClaims(rows: readonly FleetRow[]): ClaimResult[] {
  const recoveries = (strategy: string): readonly (number | null)[] =>
    rows.find((r) => r.strategy === strategy)?.recoveries ?? [];
  const describe = (strategy: string): string => {
    const r = recoveries(strategy);
    const stuck = r.filter((v) => v === null).length;
    const times = r.filter((v): v is number => v !== null);
    const mean = times.length ? times.reduce((a, b) => a + b, 0) / times.length / 1000 : Number.NaN;
    return `${stuck}/${r.length} seeds stuck${times.length ? `, mean recovery ${fmt(mean, 1)} s` : ''}`;
  };
  const allRecover = (strategy: string, withinMs = Number.POSITIVE_INFINITY): boolean => {
    const r = recoveries(strategy);
    return r.length > 0 && r.every((v) => v !== null && v <= withinMs);
  };
  const retries = recoveries('retries');
  return [
    claim(
      'retries-metastable',
      '3 retries never recover after the 5 s outage (a metastable failure), in any seed',
      retries.length > 0 && retries.every((v) => v === null),
      describe('retries'),
    ),
    claim(
      'no-retries-recover',
      'No retries recover in every seed',
      allRecover('none'),
      describe('none'),
    ),
    claim(
      'bucket-and-breaker-recover',
      'The token bucket and the circuit breaker recover in every seed',
      allRecover('bucket') && allRecover('breaker'),
      `bucket: ${describe('bucket')}; breaker: ${describe('breaker')}`,
    ),
    claim(
      'oncely-defaults-recover',
      "oncely's defaults recover within 5 s of the outage's end, in every seed",
      allRecover('oncely', 5000),
      describe('oncely'),
    ),
  ];
}
