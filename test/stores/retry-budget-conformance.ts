import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidOptionError } from '#oncely/contract/index.js';
import type {
  SharedRetryBudget,
  SharedRetryBudgetOptions,
} from '#oncely/stores/retry-budget/shared-retry-budget.js';

/** Opens a budget on a fresh row (or on `name`'s row, through a connection of its own). */
export type OpenBudget = (options?: SharedRetryBudgetOptions) => Promise<SharedRetryBudget>;

/**
 * What every shared retry budget must do, on SQLite and PostgreSQL alike: take only what the row
 * holds, refund never past capacity, and never let two connections spend the same tokens.
 * `open` gives every call its own connection; budgets opened with one `name` share one row.
 */
export function runRetryBudgetConformance(
  kind: string,
  open: OpenBudget,
  badOptions: ReadonlyArray<[Record<string, unknown>, RegExp]>,
  options: { readonly skip?: string } = {},
): void {
  let n = 0;
  const fresh = (): string => `budget-${kind}-${process.pid}-${++n}`;

  describe(`the shared retry budget on ${kind}`, options, () => {
    it('takes a retry cost while the row covers it, then refuses and takes nothing', async () => {
      const name = fresh();
      const budget = await open({ name, capacity: 12 });
      await budget.ready();
      assert.equal(budget.balance, 12);
      assert.equal(await budget.tryAcquire(budget.costOf(true)), true);
      assert.equal(budget.balance, 2);
      assert.equal(await budget.tryAcquire(budget.costOf(false)), false, 'would overdraw');
      assert.equal(budget.balance, 2);
      const other = await open({ name, capacity: 12 });
      await other.ready();
      assert.equal(other.balance, 2, 'another connection sees the same row');
      assert.equal(budget.errors, 0);
      await Promise.all([budget.close(), other.close()]);
    });

    it('refunds the last retry cost or 1, capped at capacity, batched by refundBatch', async () => {
      const name = fresh();
      const budget = await open({ name, capacity: 20, refundBatch: 0 });
      assert.equal(await budget.tryAcquire(10), true);
      budget.recordSuccess(5);
      await budget.flush();
      assert.equal(budget.balance, 15);
      budget.recordSuccess(0);
      await budget.flush();
      assert.equal(budget.balance, 16, 'a success without a retry earns noRetryIncrement');
      for (let i = 0; i < 3; i++) budget.recordSuccess(5);
      await budget.flush();
      assert.equal(budget.balance, 20, 'never past capacity');

      const batched = await open({ name, capacity: 20, refundBatch: 3 });
      assert.equal(await batched.tryAcquire(10), true);
      batched.recordSuccess(0);
      batched.recordSuccess(0);
      const reader = await open({ name, capacity: 20 });
      await reader.ready();
      assert.equal(reader.balance, 10, 'two tokens owed, below the batch: not written yet');
      batched.recordSuccess(0);
      await batched.flush();
      await reader.close();
      const again = await open({ name, capacity: 20 });
      await again.ready();
      assert.equal(again.balance, 13, 'the third token reached the batch: all three written');
      await Promise.all([budget.close(), batched.close(), again.close()]);
    });

    it('two connections contending never spend more than the row held', async () => {
      const name = fresh();
      const a = await open({ name, capacity: 100 });
      const b = await open({ name, capacity: 100 });
      await Promise.all([a.ready(), b.ready()]);
      const tries = Array.from({ length: 30 }, () => [a.tryAcquire(5), b.tryAcquire(5)]).flat();
      const granted = (await Promise.all(tries)).filter(Boolean).length;
      assert.equal(granted, 20, '100 tokens buy exactly 20 retries of 5');
      const reader = await open({ name, capacity: 100 });
      await reader.ready();
      assert.equal(reader.balance, 0);
      assert.equal(a.errors + b.errors, 0);
      await Promise.all([a.close(), b.close(), reader.close()]);
    });

    it('a smaller capacity at start-up lowers the row; a larger one keeps the balance', async () => {
      const name = fresh();
      const first = await open({ name, capacity: 50 });
      assert.equal(await first.tryAcquire(5), true);
      const smaller = await open({ name, capacity: 20 });
      await smaller.ready();
      assert.equal(smaller.balance, 20);
      const larger = await open({ name, capacity: 80, refundBatch: 0 });
      await larger.ready();
      assert.equal(larger.balance, 20);
      for (let i = 0; i < 20; i++) larger.recordSuccess(5);
      await larger.flush();
      assert.equal(larger.balance, 80, 'refunds are capped at the row capacity now set');
      await Promise.all([first.close(), smaller.close(), larger.close()]);
    });

    it('bad options are refused with the option named, before any connection', async () => {
      for (const [bad, message] of badOptions) {
        await assert.rejects(
          async () => open(bad as SharedRetryBudgetOptions),
          (error: unknown) => error instanceof InvalidOptionError && message.test(error.message),
          JSON.stringify(bad),
        );
      }
    });
  });
}

/** Options every backend refuses the same way. */
export const BAD_BUDGET_OPTIONS: ReadonlyArray<[Record<string, unknown>, RegExp]> = [
  [{ capacity: -1 }, /retryBudget\.capacity: got -1/],
  [{ retryCost: Number.NaN }, /retryBudget\.retryCost/],
  [{ name: '' }, /retryBudget\.name/],
  [{ table: 'no such; table' }, /retryBudget\.table/],
  [{ acquireTimeoutMs: 0 }, /retryBudget\.acquireTimeoutMs: got 0/],
  [{ refundBatch: -1 }, /retryBudget\.refundBatch: got -1/],
  [{ onError: 'log' }, /retryBudget\.onError/],
];
