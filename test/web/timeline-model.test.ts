import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RULES, resolveWorldParams, runWorld } from '#cli/sim/index.js';
import { buildTimeline } from '../../packages/cli/web/src/timeline-model.js';
import { describeMark } from '../../packages/cli/web/src/describe-mark.js';

const worldArb = fc.record({
  seed: fc.integer({ min: 0, max: 10_000 }),
  credits: fc.integer({ min: 0, max: 120 }),
  requestLoss: fc.constantFrom(0, 0.2, 0.5, 1),
  receiptLoss: fc.constantFrom(0, 0.4, 0.8, 1),
  retentionTicks: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }),
  forgetKeysAt: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
  retryAfterTicks: fc.integer({ min: 1, max: 16 }),
});

test('the timeline draws what the metrics count, and every duplicate story agrees with the trace', () => {
  fc.assert(
    fc.property(worldArb, fc.constantFrom(...RULES), (partial, rule) => {
      const params = resolveWorldParams(partial);
      const outcome = runWorld(params, rule);
      const model = buildTimeline(outcome.trace!, params, rule);
      const count = (kind: string): number => model.marks.filter((m) => m.kind === kind).length;
      assert.equal(count('send'), outcome.metrics.sends);
      assert.equal(count('effect'), outcome.metrics.delivered);
      assert.equal(count('duplicate'), outcome.metrics.duplicates);
      assert.equal(
        new Set(model.marks.filter((m) => m.kind === 'receipt').map((m) => m.job)).size,
        outcome.metrics.confirmed,
      );
      assert.equal(model.duplicates.length, outcome.metrics.duplicates);
      for (const story of model.duplicates) {
        const { path, previous } = story;
        assert.equal(path.job, previous.job);
        assert.ok(previous.arrivedAt! <= path.arrivedAt!);
        // The sender retried an unconfirmed job: no receipt of the earlier effect had come back.
        assert.ok(previous.receiptAt === undefined || previous.receiptAt > path.sentAt);
        if (story.retryCause === 'receipt-lost') assert.equal(previous.receiptLost, true);
        assert.equal(story.receiverCause === 'no-key', !rule.keyed);
        if (story.receiverCause === 'key-expired')
          assert.ok(path.arrivedAt! - previous.arrivedAt! >= params.retentionTicks!);
        if (story.receiverCause === 'keys-forgotten')
          assert.ok(
            params.forgetKeysAt! > previous.arrivedAt! && params.forgetKeysAt! <= path.arrivedAt!,
          );
      }
      // Lanes hold every mark, each in tick order.
      assert.equal(model.lanes.flat().length, model.marks.length);
      for (const lane of model.lanes)
        for (let i = 1; i < lane.length; i++)
          assert.ok(model.marks[lane[i - 1]!]!.tick <= model.marks[lane[i]!]!.tick);
      for (const mark of model.marks) assert.ok(describeMark(model, mark, params, rule).length > 0);
    }),
    { numRuns: 200 },
  );
});
