import { it } from 'node:test';
import assert from 'node:assert/strict';
import { stepKey } from '#oncely/contract/step-key.js';
import { stepKeyOnNode } from '#oncely/ledger/step-key-node.js';

it('the runner’s step key (node:crypto) is the contract’s stepKey, for every kind of string', () => {
  const strings = [
    '',
    'alice',
    'order-7',
    'a "quoted" \\ back\\slash',
    'tab\tnew\nline\u0000nul\u001f',
    'é ü 中文 😀',
    '\u2028\u2029 separators',
    'x'.repeat(300),
  ];
  for (const scope of strings)
    for (const key of strings.slice(0, 5))
      for (const name of strings.slice(3))
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
