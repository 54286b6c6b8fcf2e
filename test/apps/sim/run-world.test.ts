import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { repoPath } from '../../support/repo-path.js';
import {
  DEFAULT_WORLD_PARAMS,
  MatchedDraws,
  RULES,
  drawsFor,
  formatTraceJson,
  resolveWorldParams,
  ruleById,
  runWorld,
  type WorldParams,
} from '#cli/sim/index.js';
import { checkTrace } from './trace-oracle.js';

const GOLDEN_SEED = 7;
// Regenerate after a deliberate change of the model: ONCELY_UPDATE_GOLDEN=1 node --test dist/test/apps/sim/run-world.test.js
const updateGolden = process.env['ONCELY_UPDATE_GOLDEN'] === '1';

for (const rule of RULES) {
  test(`golden trace: ${rule.id}, seed ${GOLDEN_SEED}, default params`, () => {
    const path = repoPath('test', 'apps', 'sim', 'golden', `${rule.id}.json`);
    const outcome = runWorld({ seed: GOLDEN_SEED }, rule);
    const text = `${formatTraceJson(outcome.trace!)}\n`;
    if (updateGolden) writeFileSync(path, text);
    assert.equal(
      text,
      readFileSync(path, 'utf8'),
      `${path} differs: the model changed (see the comment above to regenerate)`,
    );
    checkTrace(resolveWorldParams({ seed: GOLDEN_SEED }), rule, outcome);
  });
}

test('the same seed and params give a byte-identical trace; shared draws change nothing', () => {
  for (const rule of RULES) {
    const a = formatTraceJson(runWorld({ seed: 3, retentionTicks: 8 }, rule).trace!);
    const b = formatTraceJson(runWorld({ seed: 3, retentionTicks: 8 }, rule.id).trace!);
    const shared = drawsFor(resolveWorldParams({ seed: 3, retentionTicks: 8 }));
    runWorld({ seed: 3, retentionTicks: 8 }, 'random-retry', { draws: shared });
    const c = formatTraceJson(
      runWorld({ seed: 3, retentionTicks: 8 }, rule, { draws: shared }).trace!,
    );
    assert.equal(a, b);
    assert.equal(a, c);
  }
  assert.notEqual(
    formatTraceJson(runWorld({ seed: 3 }, 'retry-oldest').trace!),
    formatTraceJson(runWorld({ seed: 4 }, 'retry-oldest').trace!),
  );
});

test('matched draws: every rule meets the same fate for the same (job, attempt)', () => {
  for (let seed = 0; seed < 20; seed++) {
    const fates = new Map<string, string>();
    for (const rule of RULES) {
      const trace = runWorld({ seed }, rule).trace!;
      for (const e of trace) {
        if (e.kind === 'send') continue;
        const sentAt = trace.find(
          (x) => x.kind === 'send' && x.job === e.job && x.attempt === e.attempt,
        )!.tick;
        // Effect and suppressed are the receiver's decision, not the world's: both are "arrived".
        const kind = e.kind === 'suppressed' ? 'effect' : e.kind;
        const key = `${e.job}/${e.attempt}/${kind}/${e.tick - sentAt}`;
        fates.set(key, `${fates.get(key) ?? ''}${rule.id},`);
      }
    }
    // The first attempt of every job is sent by every rule: its fate must appear under all of them.
    for (const [key, rules] of fates) {
      if (key.split('/')[1] === '1')
        assert.equal(
          rules.split(',').length - 1,
          RULES.length,
          `seed ${seed}: ${key} seen by ${rules}`,
        );
    }
  }
});

test('tick order: a receipt arriving on the tick a job becomes eligible prevents the retry', () => {
  // Find one-job loss-free worlds whose first round trip is exactly 8 (= retry-after) and 9.
  const found = new Map<number, number>();
  for (let seed = 0; found.size < 2 && seed < 10_000; seed++) {
    const draws = new MatchedDraws(seed, 1, 0, 0, 6);
    const roundTrip = draws.forwardDelayTicks(0, 1) + draws.returnDelayTicks(0, 1);
    if ((roundTrip === 8 || roundTrip === 9) && !found.has(roundTrip)) found.set(roundTrip, seed);
  }
  const world = (seed: number): Partial<WorldParams> => ({
    seed,
    jobs: 1,
    requestLoss: 0,
    receiptLoss: 0,
    retryAfterTicks: 8,
  });
  assert.equal(
    runWorld(world(found.get(8)!), 'retry-oldest').metrics.sends,
    1,
    'receipts are handled before dispatch',
  );
  assert.equal(
    runWorld(world(found.get(9)!), 'retry-oldest').metrics.duplicates,
    1,
    'one tick later, the retry goes out',
  );
});

test('retention: an expired key lets a repeat act again, and a suppressed repeat does not refresh it', () => {
  let sawExpiry = false;
  for (let seed = 0; seed < 64 && !sawExpiry; seed++) {
    const outcome = runWorld({ seed, retentionTicks: 8 }, 'retry-key');
    checkTrace(resolveWorldParams({ seed, retentionTicks: 8 }), ruleById('retry-key')!, outcome);
    sawExpiry = outcome.metrics.duplicates > 0;
  }
  assert.ok(sawExpiry, 'some world shows a second effect after expiry');
});

test('forgetting keys clears the ledger but keeps every effect and all sender memory', () => {
  const params = { credits: 100, forgetKeysAt: 40 };
  let total = 0;
  for (let seed = 0; seed < 64; seed++) {
    const outcome = runWorld({ ...params, seed }, 'retry-key');
    checkTrace(resolveWorldParams({ ...params, seed }), ruleById('retry-key')!, outcome);
    const kept = runWorld({ credits: 100, seed }, 'retry-key');
    // The sender does not learn of the reset, so it sends exactly as it would have without it.
    assert.deepEqual(
      outcome.trace!.filter((e) => e.kind === 'send'),
      kept.trace!.filter((e) => e.kind === 'send'),
    );
    total += outcome.metrics.duplicates;
  }
  assert.ok(total > 0);
});

test('properties over random worlds: the trace obeys the specification, and the "never" claims hold', () => {
  const world = fc.record({
    seed: fc.nat(),
    jobs: fc.integer({ min: 1, max: 12 }),
    horizonTicks: fc.integer({ min: 0, max: 60 }),
    sendsPerTick: fc.integer({ min: 1, max: 3 }),
    credits: fc.integer({ min: 0, max: 80 }),
    requestLoss: fc.constantFrom(0, 0.2, 0.5, 1),
    receiptLoss: fc.constantFrom(0, 0.4, 0.7, 1),
    maxDelayTicks: fc.integer({ min: 1, max: 8 }),
    retryAfterTicks: fc.integer({ min: 1, max: 20 }),
    maxAttempts: fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
    retentionTicks: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }),
    forgetKeysAt: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
  });
  fc.assert(
    fc.property(world, fc.constantFrom(...RULES), (partial, rule) => {
      const params = resolveWorldParams(partial);
      const outcome = runWorld(params, rule);
      checkTrace(params, rule, outcome);
      const m = outcome.metrics;
      assert.ok(m.confirmed <= m.delivered && m.delivered <= params.jobs);
      if (rule.id === 'send-once') assert.equal(m.duplicates, 0);
      if (rule.keyed && params.retentionTicks === null && params.forgetKeysAt === null)
        assert.equal(m.duplicates, 0);
      if (params.requestLoss === 1) assert.equal(m.delivered, 0);
      if (params.receiptLoss === 1) assert.equal(m.confirmed, 0);
      assert.deepEqual(
        runWorld(params, rule, { trace: false }).metrics,
        m,
        'the trace changes nothing',
      );
    }),
    { numRuns: 300, seed: 2 },
  );
});

test('parameters are validated once, with messages that name the parameter and the range', () => {
  assert.throws(
    () => runWorld({ credits: -1 }, 'send-once'),
    /invalid option credits: got -1, expected an integer from 0/,
  );
  assert.throws(
    () => runWorld({ requestLoss: 1.5 }, 'send-once'),
    /requestLoss: got 1.5, expected a probability from 0 to 1/,
  );
  assert.throws(
    () => runWorld({ retentionTicks: 0 }, 'retry-key'),
    /retentionTicks: got 0, expected an integer from 1 .* or null for the whole run/,
  );
  assert.throws(
    () => runWorld({}, 'retry-harder' as never),
    /invalid option rule: got "retry-harder", expected one of send-once/,
  );
  const wrong = drawsFor(resolveWorldParams({ seed: 1 }));
  assert.throws(() => runWorld({ seed: 2 }, 'send-once', { draws: wrong }), /draws/);
  assert.deepEqual(resolveWorldParams({}), DEFAULT_WORLD_PARAMS);
  assert.equal(ruleById('retry-key')?.keyed, true);
  assert.equal(ruleById('nope'), undefined);
});
