import { it } from 'node:test';
import assert from 'node:assert/strict';
import { stepKey } from '#oncely/contract/step-key.js';
import { stepKeyOnNode } from '#oncely/ledger/step-key-node.js';
import { stepKeyTriples } from '../support/step-key-strings.js';

it('the runner’s step key (node:crypto) is the contract’s stepKey, for every kind of string', () => {
  for (const [scope, key, name] of stepKeyTriples())
    assert.equal(
      stepKeyOnNode(scope, key, name),
      stepKey(scope, key, name),
      JSON.stringify([scope, key, name]),
    );
  assert.equal(
    stepKeyOnNode('alice', 'order-7', 'charge'),
    'step_4ce7a572a5724a226e196ac9b56a694ef64095d2',
  );
  // A lone surrogate has no canonical form: refused alike.
  for (const odd of ['\ud800', 'a\udfffb'])
    assert.throws(() => stepKeyOnNode('s', 'k', odd), /Lone surrogate/);
});
