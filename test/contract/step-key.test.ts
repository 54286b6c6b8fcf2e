import { it } from 'node:test';
import assert from 'node:assert/strict';
import { keyFor } from '#oncely/contract/idempotency-key.js';
import { stepKey } from '#oncely/contract/step-key.js';
import { stepKeyTriples } from '../support/step-key-strings.js';

it('stepKey is keyFor({ scope, key, step }, "step"), for every kind of string', () => {
  for (const [scope, key, name] of stepKeyTriples())
    assert.equal(
      stepKey(scope, key, name),
      keyFor({ scope, key, step: name }, 'step'),
      JSON.stringify([scope, key, name]),
    );
  // JCS has no form for a lone surrogate: both refuse it alike.
  for (const odd of ['\ud800', 'a\udfffb', '\udc00\ud800'])
    for (const args of [
      [odd, 'k', 'n'],
      ['s', odd, 'n'],
      ['s', 'k', odd],
    ] as const) {
      assert.throws(
        () => keyFor({ scope: args[0], key: args[1], step: args[2] }, 'step'),
        /Lone surrogate/,
      );
      assert.throws(() => stepKey(args[0], args[1], args[2]), /Lone surrogate/);
    }
  // A pair is fine.
  assert.equal(
    stepKey('\ud83d\ude00', 'k', 'n'),
    keyFor({ scope: '😀', key: 'k', step: 'n' }, 'step'),
  );
  // A fixed value: the key of a step must never change between versions (a retry after an
  // upgrade sends the same key downstream).
  assert.equal(
    stepKey('alice', 'order-7', 'charge'),
    'step_4ce7a572a5724a226e196ac9b56a694ef64095d2',
  );
});
