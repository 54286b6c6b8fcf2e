import { createClient, isHttpRetryError } from 'oncely';
import { createSqliteRetryBudget, openSqliteDatabase } from 'oncely/stores/sqlite';
// or: createPostgresRetryBudget({ pool }) from 'oncely/stores/postgres'

const retryBudget = createSqliteRetryBudget({
  // A connection of its own; every process that opens this file spends the same balance.
  database: () => openSqliteDatabase(process.env.DB_FILE ?? 'budget.db'),
  name: 'payments-api', // every process using this name spends one balance
});
await retryBudget.ready(); // makes the table and the row; rejects if the database is unreachable
const client = createClient({ retryBudget });
const url = `${process.env.URL ?? 'http://127.0.0.1:8787'}/hooks/run-complete`;
try {
  const { response } = await client.request(url, {
    method: 'POST',
    body: JSON.stringify({ runId: 'run-9' }),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.TOKEN}` },
    idempotencyKey: 'run-9',
    maxAttempts: 3,
  });
  console.log(response.status);
} catch (error) {
  if (!isHttpRetryError(error)) throw error;
  // Each retry took its cost from the shared balance (5 tokens of 500 by default).
  console.log(error.report.stopReason, error.report.attemptCount, retryBudget.balance);
} finally {
  await retryBudget.close(); // writes the refunds still owed
}
