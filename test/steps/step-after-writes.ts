import assert from 'node:assert/strict';
import { jsonReceipt, type Ledger } from '#oncely/ledger/index.js';

/**
 * One request on a store with one writer: a step (committed on its own), then `write` through
 * the request's own transaction, then a second step, which must be refused (`step_after_writes`)
 * without running rather than wait forever for that transaction. The request itself goes on and
 * is executed. Resolves with the refusal.
 */
export async function stepAfterWrites<Tx>(
  ledger: Ledger<Tx>,
  write: (tx: Tx) => Promise<void>,
): Promise<unknown> {
  let refused: unknown;
  let ranAfter = false;
  const result = await ledger.execute(
    { scope: 'alice', key: 'k1', fingerprint: 'fp' },
    async (tx, _claim, step) => {
      assert.equal(await step('charge', () => 'ch'), 'ch');
      await write(tx);
      refused = await step('email', () => (ranAfter = true)).catch((error: unknown) => error);
      return jsonReceipt(201, { ok: true });
    },
  );
  assert.equal((refused as { code?: string }).code, 'step_after_writes');
  assert.equal(ranAfter, false);
  assert.equal(result.kind, 'executed');
  return refused;
}
