// bench/steps-chaos's short run: checkouts of three steps on two servers and one PostgreSQL,
// the servers SIGKILLed at each kind of step boundary, the payment mock failing at random. It
// fails on a single second charge, order or email intent, or a replay with another body. The
// broken run (the charge outside a step, as before steps) shows the check can fail.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatStepsChaos, passed } from '../../bench/steps-chaos-report.js';
import { runStepsChaos } from '../../bench/steps-chaos-run.js';
import { KILL_KINDS } from '../../bench/steps-chaos-protocol.js';

const pgUrl = process.env['ONCELY_TEST_POSTGRES_URL'];
const skip = pgUrl ? undefined : 'ONCELY_TEST_POSTGRES_URL is not set';
const PAYMENT = { error: 0.05, timeout: 0.03 };

describe('bench/steps-chaos', skip === undefined ? {} : { skip }, () => {
  it('200 checkouts, 3 SIGKILLs of each kind: one charge, one order, one email each', async () => {
    const result = await runStepsChaos({
      pgUrl: pgUrl!,
      requests: 200,
      each: 3,
      seed: 1,
      concurrency: 16,
      payment: PAYMENT,
    });
    const report = formatStepsChaos(result);
    const v = result.verdict;
    for (const kind of KILL_KINDS)
      assert.ok(result.kills.filter((k) => k.kind === kind).length >= 3, `${kind}\n${report}`);
    assert.deepEqual(result.crashes, [], report);
    assert.equal(v.answered, 200, report);
    assert.deepEqual([v.charges.one, v.orders.one, v.emails.one], [200, 200, 200], report);
    assert.equal(v.manyKeys, 0, report);
    assert.equal(v.sameBody, 200, report);
    assert.equal(v.bodyNamesCharge, 200, report);
    assert.ok(passed(result), report);
    assert.match(report, /\nPASS\n$/);
  });

  it('broken: the charge outside a step is made again by a retry, and the check says FAIL', async () => {
    const result = await runStepsChaos({
      pgUrl: pgUrl!,
      requests: 60,
      each: 2,
      seed: 1,
      concurrency: 8,
      payment: PAYMENT,
      broken: true,
    });
    const report = formatStepsChaos(result);
    assert.ok(result.verdict.charges.more > 0, report);
    assert.equal(passed(result), false);
    assert.match(report, /\nFAIL\n$/);
  });
});
