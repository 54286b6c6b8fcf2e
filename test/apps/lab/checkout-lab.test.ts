import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCheckoutLab } from '#cli/lab/checkout/checkout-lab.js';
import { formatCheckoutLab } from '#cli/lab/checkout/checkout-lab-report.js';
import { EXIT } from '#cli/cli/exit.js';
import { runOncely } from '../../support/run-cli.js';
import { CHECKOUT_RECORDING } from '../../../packages/cli/web/src/checkout-recording.js';

test('lab checkout: SIGKILLed at each step boundary, naive charges every order twice, stepped once', async () => {
  const result = await runCheckoutLab({ seed: 7 });
  const [naive, stepped] = result.runs;
  assert.equal(naive?.handler, 'naive');
  assert.equal(stepped?.handler, 'stepped');
  for (const run of [naive!, stepped!]) {
    assert.equal(run.lives, 4, 'three kills, four lives of the server');
    for (const order of run.orders) {
      assert.equal(order.status, 201, `${run.handler} ${order.order}`);
      assert.equal(order.attempts, 2, 'one retry under the same key after the kill');
      assert.equal(order.orders, 1, 'the order row: once (a killed transaction never commits)');
      assert.equal(order.emails, 1);
      assert.equal(order.replaySame, true, 'a later retry gets the same body');
    }
  }
  assert.deepEqual(
    naive!.orders.map((o) => [o.killedAt, o.chargeCalls, o.charges]),
    [
      ['in-charge', 2, 2],
      ['after-charge', 2, 2],
      ['before-receipt', 2, 2],
    ],
  );
  // Killed in the charge: the step runs again under its key and the payment service answers its
  // earlier charge. Killed after a recorded charge: the step is skipped, no second call.
  assert.deepEqual(
    stepped!.orders.map((o) => [o.killedAt, o.chargeCalls, o.charges]),
    [
      ['in-charge', 2, 1],
      ['after-charge', 1, 1],
      ['before-receipt', 1, 1],
    ],
  );
  // Seeded: the client's jittered waits are the seed's, on a virtual clock.
  assert.deepEqual(
    result.runs.map((run) => run.orders.map((o) => o.waitsMs)),
    [
      [[66], [53], [72]],
      [[10], [81], [30]],
    ],
  );
  // The page shows this run as recorded (packages/cli/web/src/checkout-recording.ts).
  assert.deepEqual(
    JSON.parse(JSON.stringify(result)),
    CHECKOUT_RECORDING,
    'the recording is stale: paste `oncely lab checkout --json` into checkout-recording.ts',
  );
  const text = formatCheckoutLab(result);
  assert.match(text, /^naive: {3}6 charges for 3 orders: 3 cards charged more than once$/m);
  assert.match(text, /^stepped: 3 charges for 3 orders: one each \(1 charge call repeated/m);
  assert.match(text, /^ {2}total {20}3 {21}4 {13}3 {8}3 {7}3$/m);
});

test('lab checkout: a seed that is not an integer is one line and exit 2', async () => {
  const result = await runOncely(['lab', 'checkout', '--seed', 'x']);
  assert.equal(result.status, EXIT.usage);
  assert.equal(result.stderr, 'oncely: invalid option --seed: got "x", expected an integer\n');
  assert.equal(result.stdout, '');
});
