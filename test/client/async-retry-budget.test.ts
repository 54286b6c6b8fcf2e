import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { createClient } from '#oncely/client/fetch-client.js';
import { retry } from '#oncely/client/retry.js';
import { isRetryError, type RetryError } from '#oncely/client/retry-report.js';
import type { RetryBudget } from '#oncely/policy/index.js';
import { createSqliteRetryBudget, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { seededRandom, VirtualClock } from '#oncely/time/index.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * A budget that answers later, as a database does: each tryAcquire waits for the test to
 * `answer` it. Its balance is an estimate, so the policy step must leave the call to it.
 */
class LateBudget implements RetryBudget {
  readonly balanceIsEstimate = true;
  balance = 0; // stale on purpose: a step that trusted it would never ask
  readonly asked: number[] = [];
  readonly refunds: number[] = [];
  readonly #waiting: Array<(granted: boolean | Error) => void> = [];
  costOf(afterTimeout: boolean): number {
    return afterTimeout ? 10 : 5;
  }
  tryAcquire(cost: number): Promise<boolean> {
    this.asked.push(cost);
    return new Promise((resolve, reject) =>
      this.#waiting.push((a) => (a instanceof Error ? reject(a) : resolve(a))),
    );
  }
  recordSuccess(lastRetryCost: number): void {
    this.refunds.push(lastRetryCost);
  }
  async answer(granted: boolean | Error): Promise<void> {
    // A bounded number of event-loop turns (not time): a loop that never asks fails, not hangs.
    for (let turn = 0; this.#waiting.length === 0; turn++) {
      if (turn === 1000) throw new Error('the retry loop never asked the budget');
      await new Promise<void>((r) => setImmediate(r));
    }
    this.#waiting.shift()!(granted);
  }
}

const answers = (...statuses: number[]) => {
  let n = 0;
  return async () => ({
    status: statuses[Math.min(n++, statuses.length - 1)]!,
    headers: new Headers(),
  });
};

async function failure(promise: Promise<unknown>): Promise<RetryError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isRetryError(error), `expected a RetryError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}

test('the loop awaits an async budget: a grant retries, and the success refunds its cost', async () => {
  const budget = new LateBudget();
  const clock = new VirtualClock();
  const pending = retry(answers(503, 200), { clock, retryBudget: budget });
  await budget.answer(true);
  const { report } = await pending;
  assert.equal(report.attemptCount, 2);
  assert.deepEqual(budget.asked, [5]);
  assert.deepEqual(budget.refunds, [5]);
});

test('a refusal stops with retry_budget_drained; no retry is sent', async () => {
  const budget = new LateBudget();
  let sent = 0;
  const op = async () => (sent++, { status: 503, headers: new Headers() });
  const pending = failure(
    retry(op, { clock: new VirtualClock(), retryBudget: budget, maxAttempts: 5 }),
  );
  await budget.answer(true);
  await budget.answer(false);
  const error = await pending;
  assert.equal(error.report.stopReason, 'retry_budget_drained');
  assert.equal(sent, 2);
  assert.deepEqual(budget.asked, [5, 5]);
});

test('a budget that rejects is a refusal (fail closed): its error never reaches the caller', async () => {
  const budget = new LateBudget();
  const pending = failure(retry(answers(503), { clock: new VirtualClock(), retryBudget: budget }));
  await budget.answer(new Error('database is down'));
  const error = await pending;
  assert.equal(error.report.stopReason, 'retry_budget_drained');
  assert.equal(error.report.attemptCount, 1);
});

const dir = tempDir('oncely-client-budget-');

test('two clients on one SQLite budget share it: 10 tokens buy two retries between them', async () => {
  const file = join(dir, 'shared.db');
  const clock = new VirtualClock();
  const open = () =>
    createSqliteRetryBudget({ database: () => openSqliteDatabase(file), clock, capacity: 10 });
  const budgets = [open(), open()];
  let sent = 0;
  const fetch = (async () => (
    sent++, new Response('down', { status: 503 })
  )) as typeof globalThis.fetch;
  const clients = budgets.map((retryBudget) =>
    createClient({
      fetch,
      clock,
      random: seededRandom(1),
      retryBudget,
      maxAttempts: 3,
    }),
  );
  const reasons: string[] = [];
  for (let i = 0; i < 4; i++) {
    const error = await failure(clients[i % 2]!.request('http://example.test/'));
    reasons.push(error.report.stopReason);
  }
  assert.equal(sent, 4 + 2, 'four first tries, and only two retries in all');
  assert.deepEqual(reasons, [
    'budget_exhausted',
    'retry_budget_drained',
    'retry_budget_drained',
    'retry_budget_drained',
  ]);
  await Promise.all(budgets.map((b) => b.close()));
});
