import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fleetCells, runCell, runDependency, summarizeFleet } from '#cli/sim/index.js';

test('budget: one shared bucket holds a 100 %-failing dependency to ≤ 1.1× first tries', () => {
  const results = fleetCells('budget').map((cell) => runCell(cell, 2));
  const summary = summarizeFleet('budget', results);
  const shared = summary.rows.filter((r) => r.strategy === 'oncely-shared' && r.x === 1);
  assert.equal(shared.length, 4, 'every fleet size');
  for (const row of shared)
    assert.ok(row.values['load']! <= 1.1, `${row.clients}: ${row.values['load']}`);
  const perProcess = summary.rows.find(
    (r) => r.strategy === 'oncely' && r.x === 1 && r.clients === 100,
  );
  assert.ok(perProcess!.values['load']! >= 1.5, 'a bucket per process lets the fleet retry more');
  for (const claim of summary.claims) assert.ok(claim.reproduced, `${claim.id}: ${claim.detail}`);
});

test('budget: the shared bucket pays for exactly capacity ÷ retry cost retries, fleet-wide', () => {
  // 500 tokens at 5 a retry: 100 retries in all, whatever the fleet size; none succeed to refund.
  for (const clients of [8, 100]) {
    const o = runDependency({ seed: 3, failureRate: 1, clients }, 'oncely-shared');
    assert.equal(o.attempts - o.firstTries, 100, `${clients} clients`);
    assert.equal(o.successes, 0);
    const each = runDependency({ seed: 3, failureRate: 1, clients }, 'oncely');
    assert.equal(each.attempts - each.firstTries, 100 * clients, 'a bucket each: 100 retries each');
  }
});

test('budget: the same seed gives the same table (deterministic)', () => {
  const run = () =>
    summarizeFleet(
      'budget',
      fleetCells('budget')
        .slice(0, 6)
        .map((cell) => runCell(cell, 1, 7)),
    ).rows.map((r) => r.values['attempts']);
  assert.deepEqual(run(), run());
});
