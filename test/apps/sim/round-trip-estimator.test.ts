import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RoundTripEstimator, runWorld } from '#cli/sim/index.js';

test('RFC 6298 smoothing: the timeout starts at retry-after, then follows SRTT + 4 RTTVAR, in whole ticks', () => {
  const rto = new RoundTripEstimator(8, 64);
  assert.equal(rto.timeoutTicks, 8);
  rto.observe(7); // SRTT 7, RTTVAR 3.5: 7 + 14
  assert.equal(rto.timeoutTicks, 21);
  rto.observe(7); // RTTVAR 2.625: 7 + 10.5, rounded up
  assert.equal(rto.timeoutTicks, 18);
  for (let i = 0; i < 200; i++) rto.observe(7);
  assert.equal(rto.timeoutTicks, 8, 'a steady round trip leaves SRTT + the one-tick floor');
  assert.equal(rto.samples, 202);
  const capped = new RoundTripEstimator(8, 10);
  capped.observe(12);
  assert.equal(capped.timeoutTicks, 10, 'never past maxRetryAfterTicks');
});

test('on a loss-free channel the learned timeout stops wasting sends that fixed retry-after 8 spends', () => {
  let learned = 0;
  let fixed = 0;
  for (let seed = 0; seed < 64; seed++) {
    learned += runWorld({ seed, requestLoss: 0, receiptLoss: 0 }, 'learned-key', { trace: false })
      .metrics.sends;
    fixed += runWorld({ seed, requestLoss: 0, receiptLoss: 0 }, 'retry-key', { trace: false })
      .metrics.sends;
  }
  // 18 jobs x 64 worlds need 1,152 sends; only the first round trips run on the initial 8 ticks.
  assert.ok(learned < fixed, `learned ${learned} < fixed ${fixed}`);
  assert.ok(learned - 18 * 64 < (fixed - 18 * 64) / 10, 'fewer than a tenth of the wasted sends');
});
