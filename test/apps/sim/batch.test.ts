import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BATCH_SETTINGS,
  METRIC_NAMES,
  RULES,
  PUBLISHED_FIGURES,
  checkClaims,
  closedForm,
  closedFormCheck,
  compareWithPublished,
  findRow,
  meansTable,
  runBatch,
  runWorld,
  type MeansRow,
} from '#cli/sim/index.js';

const batch = runBatch();

test('the batch is 10 settings x 64 seeds = 640 worlds, every outcome kept, in batch order', () => {
  assert.equal(BATCH_SETTINGS.length, 10);
  assert.equal(batch.worlds, 640);
  assert.equal(batch.outcomeCount, 640 * RULES.length);
  assert.equal(batch.outcomes.length, batch.outcomeCount);
  const first = batch.outcomes[0]!;
  assert.deepEqual([first.setting, first.seed, first.rule], ['default', 0, 'send-once']);
  // Each kept outcome is the world run on its own.
  const sample = batch.outcomes[777]!;
  const setting = BATCH_SETTINGS.find((s) => s.id === sample.setting)!;
  const alone = runWorld({ ...setting.overrides, seed: sample.seed }, sample.rule, {
    trace: false,
  }).metrics;
  for (const name of METRIC_NAMES) assert.equal(sample[name], alone[name]);
});

test('the means table equals the means of the kept outcomes', () => {
  assert.deepEqual(meansTable(batch.outcomes), batch.means);
  const row = findRow(batch.means, 'credits-24', 'retry-key')!;
  const picked = batch.outcomes.filter((o) => o.setting === 'credits-24' && o.rule === 'retry-key');
  assert.equal(row.worlds, 64);
  assert.equal(row.mean.delivered, picked.reduce((n, o) => n + o.delivered, 0) / 64);
  assert.equal(row.max.delivered, Math.max(...picked.map((o) => o.delivered)));
});

test('progress is reported once per world, and keepOutcomes: false keeps the means only', () => {
  const seen: number[] = [];
  const small = runBatch({
    seeds: 3,
    keepOutcomes: false,
    onProgress: (done, total) => seen.push(done / total),
  });
  assert.equal(seen.length, 30);
  assert.equal(seen.at(-1), 1);
  assert.deepEqual(
    seen,
    [...seen].sort((a, b) => a - b),
  );
  assert.equal(small.outcomes.length, 0);
  assert.equal(small.means.length, 10 * RULES.length);
  assert.throws(() => runBatch({ seeds: 0 }), /invalid option seeds: got 0/);
});

test('every claim of the simulator write-up is reproduced on the 640 worlds', () => {
  const claims = checkClaims(batch.means);
  assert.equal(claims.length, 11);
  for (const claim of claims) assert.ok(claim.reproduced, `${claim.text}: ${claim.detail}`);
});

test('a claim that does not hold is reported as not reproduced', () => {
  const doctored: MeansRow[] = batch.means.map((row) =>
    row.setting === 'retention-8' && row.rule === 'send-once'
      ? { ...row, max: { ...row.max, duplicates: 1 } }
      : row,
  );
  const byId = new Map(checkClaims(doctored).map((c) => [c.id, c]));
  assert.equal(byId.get('send-once-never-duplicates')?.reproduced, false);
  assert.equal(byId.get('key-delivers-less')?.reproduced, true);
  const missing = checkClaims(batch.means.filter((row) => row.setting !== 'credits-24'));
  assert.equal(missing.find((c) => c.id === 'key-delivers-less-at-24')?.reproduced, false);
});

test('the closed form: a worked example, and 2,000 simulated seeds within 1%', () => {
  const e = closedForm(0.1, 0.3, 4);
  assert.equal(e.delivered.toFixed(4), '0.9999');
  assert.equal(e.confirmed.toFixed(4), '0.9813');
  assert.equal(e.effects.toFixed(4), '1.4018');
  const check = closedFormCheck();
  assert.equal(check.seeds, 2000);
  assert.ok(
    check.params.retryAfterTicks > 2 * check.params.maxDelayTicks,
    'retry-after above the longest round trip',
  );
  for (const key of ['delivered', 'confirmed', 'effects'] as const) {
    assert.ok(
      check.relativeError[key] <= 0.01,
      `${key}: ${check.simulated[key]} vs ${check.expected[key]}`,
    );
  }
  assert.ok(check.withinTolerance);
  const other = closedFormCheck({
    requestLoss: 0.3,
    receiptLoss: 0.5,
    maxAttempts: 2,
    seeds: 2000,
  });
  assert.ok(other.withinTolerance, JSON.stringify(other.relativeError));
});

test("our default-channel means sit within sampling noise of the simulator write-up's", () => {
  const comparison = compareWithPublished(batch.means);
  assert.equal(comparison.length, PUBLISHED_FIGURES.length);
  for (const c of comparison) {
    assert.ok(!Number.isNaN(c.ours), `${c.setting}/${c.rule} is in the batch`);
    // |z| < 2.5: two independent 64-world samples of the same model rarely differ by more.
    if (c.z !== null)
      assert.ok(
        Math.abs(c.z) < 2.5,
        `${c.setting} ${c.rule} ${c.metric}: ours ${c.ours}, seed ${c.value}, z ${c.z}`,
      );
    else
      assert.equal(
        c.difference,
        0,
        `${c.setting} ${c.rule} ${c.metric}: every world agrees, so must the figure`,
      );
  }
});
