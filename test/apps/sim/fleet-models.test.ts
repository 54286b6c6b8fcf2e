import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fleetCells,
  retriesClosedForm,
  runCell,
  runDependency,
  runOverload,
  summarizeFleet,
  type FleetStrategy,
} from '#cli/sim/index.js';
import { runFleetPool } from '#cli/cli/commands/fleet-pool.js';

// Small fleets and few seeds: the full batches run in the CLI and bench (docs/fleet.md).

test('contention claims hold on a small batch (N = 50 and 100, 8 seeds)', () => {
  const results = fleetCells('contention', { clients: [50, 100] }).map((cell) => runCell(cell, 8));
  const claims = summarizeFleet('contention', results).claims;
  const byId = new Map(claims.map((c) => [c.id, c]));
  for (const id of [
    'no-backoff-finishes-first',
    'no-backoff-n-squared-over-4',
    'exponential-barely-reduces-calls',
    'exponential-order-of-magnitude-longer',
    'jitter-fewest-calls-100',
    'jitter-halves-calls',
  ]) {
    assert.ok(byId.get(id)?.reproduced, `${id}: ${byId.get(id)?.detail}`);
  }
  assert.equal(
    byId.get('jitter-fewest-calls-190')?.reproduced,
    false,
    'a claim whose rows are missing is not reproduced',
  );
});

test('dependency: 3 retries match the closed forms; no retries load exactly 1; the breaker stops retrying at high p', () => {
  const params = { clients: 20, totalRatePerSecond: 400, durationMs: 5_000 };
  for (const p of [0.1, 0.5]) {
    const o = runDependency({ ...params, seed: 1, failureRate: p }, 'retries');
    const expected = retriesClosedForm(p);
    assert.ok(
      Math.abs(o.attempts / o.firstTries - expected.load) < 0.05,
      `load ${o.attempts / o.firstTries} vs ${expected.load}`,
    );
    assert.ok(
      Math.abs(o.successes / o.firstTries - expected.success) < 0.03,
      `success vs ${expected.success}`,
    );
    const none = runDependency({ ...params, seed: 1, failureRate: p }, 'none');
    assert.equal(none.attempts, none.firstTries);
  }
  const breaker = runDependency({ ...params, seed: 2, failureRate: 0.5 }, 'breaker');
  assert.ok(breaker.attempts / breaker.firstTries < 1.05);
  const bucket = runDependency({ ...params, seed: 2, failureRate: 0.75 }, 'bucket');
  assert.ok(bucket.attempts / bucket.firstTries < 1.3, 'the bucket caps retries near 10% of calls');
  assert.deepEqual(
    runDependency({ ...params, seed: 2, failureRate: 0.3 }, 'oncely'),
    runDependency({ ...params, seed: 2, failureRate: 0.3 }, 'oncely'),
    'same seed, same run',
  );
});

test('overload: after the outage, 3 retries stay stuck while no retries and oncely recover', () => {
  // A tenth of the default fleet and server (each client still sends 7 req/s): the same ratios, a tenth of the events.
  const small = {
    clients: 10,
    totalRatePerSecond: 70,
    workers: 1,
    queueLimit: 100,
    durationMs: 25_000,
  };
  const recovery = (strategy: FleetStrategy): number | null =>
    runOverload({ ...small, seed: 4 }, strategy).recoveryMs;
  assert.equal(recovery('retries'), null, 'metastable');
  assert.notEqual(recovery('none'), null);
  const oncely = recovery('oncely');
  assert.ok(oncely !== null && oncely <= 5_000, `oncely recovered after ${oncely} ms`);
});

test('bad parameters are refused, naming the parameter', () => {
  assert.throws(() => runDependency({ seed: 0, failureRate: 1.5 }, 'none'), /failureRate/);
  assert.throws(() => runOverload({ seed: 0, workers: 0 }, 'none'), /workers/);
  assert.throws(
    () => runDependency({ seed: 0, failureRate: 0.1 }, 'sometimes' as FleetStrategy),
    /strategy/,
  );
});

test('a batch in worker threads gives identical totals with 1 and 2 workers, in cell order', async () => {
  const cells = fleetCells('contention', { clients: [10, 20] });
  const one = await runFleetPool(cells, { seeds: 3, workers: 1 });
  const progress: number[] = [];
  const two = await runFleetPool(cells, {
    seeds: 3,
    workers: 2,
    onProgress: (done) => progress.push(done),
  });
  assert.deepEqual(two, one);
  assert.deepEqual(
    one,
    cells.map((cell) => runCell(cell, 3)),
    'the same as running each cell in this thread',
  );
  assert.deepEqual(
    progress,
    [...Array(cells.length).keys()].map((i) => i + 1),
  );
  await assert.rejects(runFleetPool(cells, { seeds: 1, workers: 0 }), /--workers/);
});
