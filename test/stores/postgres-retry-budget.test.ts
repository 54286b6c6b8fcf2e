import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createPostgresRetryBudget, type PgPool } from '#oncely/stores/postgres/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { BAD_BUDGET_OPTIONS, runRetryBudgetConformance } from './retry-budget-conformance.js';
import { describePostgres, dropSchema, pg, uniqueSchemaName } from './postgres-env.js';

await describePostgres('the shared retry budget', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_budget');
  const pools: PgPool[] = [];
  after(async () => {
    if (!url) return;
    await Promise.all(pools.map((pool) => pool.end()));
    await dropSchema(url, schema);
  });
  // Every budget gets a pool of its own: as separate processes would.
  runRetryBudgetConformance(
    'postgres',
    async (budgetOptions = {}) => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      pools.push(pool);
      return createPostgresRetryBudget({ pool, schema, ...budgetOptions });
    },
    [
      ...BAD_BUDGET_OPTIONS,
      [{ pool: 'postgres://x' }, /pool: got "postgres:\/\/x"/],
      [{ schema: 'a b' }, /schema: got "a b"/],
    ],
    options,
  );
});

test('a database that never answers refuses the retry after acquireTimeoutMs: no hang', async () => {
  const clock = new VirtualClock();
  const never = new Promise<never>(() => {});
  const silent = { query: () => never, connect: () => never, end: async () => {} };
  const budget = createPostgresRetryBudget({
    pool: silent as unknown as PgPool,
    clock,
    acquireTimeoutMs: 250,
  });
  let answer: boolean | undefined;
  void budget.tryAcquire(5).then((granted) => (answer = granted));
  await clock.advance(249);
  assert.equal(answer, undefined, 'still waiting');
  await clock.advance(1);
  assert.equal(answer, false);
  assert.equal(budget.errors, 1);
});

test('a database that refuses connections refuses the retry, counted, not thrown', async () => {
  const refused = async (): Promise<never> => {
    throw new Error('connect ECONNREFUSED 127.0.0.1:1');
  };
  const errors: unknown[] = [];
  const budget = createPostgresRetryBudget({
    pool: { query: refused, connect: refused, end: async () => {} } as unknown as PgPool,
    onError: (error) => errors.push(error),
  });
  assert.equal(await budget.tryAcquire(5), false);
  assert.equal(await budget.tryAcquire(5), false, 'ready() is tried again, and fails again');
  assert.equal(budget.errors, 2);
  assert.match(String(errors[0]), /ECONNREFUSED/);
});
