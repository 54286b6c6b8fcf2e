import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runOutboxLab } from '#cli/lab/outbox/outbox-lab.js';

test('lab outbox: resumed from the journal under the same key, one effect; without a journal, two', async () => {
  const result = await runOutboxLab();
  assert.equal(result.journalEffects, 1);
  assert.equal(result.naiveEffects, 2);
  assert.ok(result.lines.some((line) => line.includes('resuming under the same key')));
  assert.ok(
    result.lines.some((line) =>
      /^sender 2: delivered with status 201 after 2 attempts$/.test(line),
    ),
  );
});
