import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createSqliteRetryBudget,
  openSqliteDatabase,
  type SqliteRetryBudgetOptions,
} from '#oncely/stores/sqlite/index.js';
import { BAD_BUDGET_OPTIONS, runRetryBudgetConformance } from './retry-budget-conformance.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-budget-');
const file = join(dir, 'budgets.db');

// Every budget opens its own connection to one file: as separate processes would.
runRetryBudgetConformance(
  'sqlite',
  async (options = {}) =>
    createSqliteRetryBudget({ database: () => openSqliteDatabase(file), ...options }),
  [
    ...BAD_BUDGET_OPTIONS,
    [{ database: 'budgets.db' }, /database: got "budgets.db"/],
    [{ busyTimeoutMs: -1 }, /busyTimeoutMs: got -1/],
  ],
);

test('a database error refuses the retry (fail closed), counts it, and never throws', async () => {
  const db = openSqliteDatabase(join(dir, 'closed.db'));
  const errors: unknown[] = [];
  const budget = createSqliteRetryBudget({
    database: db,
    name: 'closed',
    onError: (error) => errors.push(error),
  } satisfies SqliteRetryBudgetOptions);
  assert.equal(await budget.tryAcquire(5), true);
  db.close();
  assert.equal(await budget.tryAcquire(5), false);
  assert.equal(budget.errors, 1);
  assert.match(String(errors[0]), /not open/);
  budget.recordSuccess(0);
  await budget.flush(); // the refund fails too: kept, counted, not thrown
  assert.equal(budget.errors, 2);
});
