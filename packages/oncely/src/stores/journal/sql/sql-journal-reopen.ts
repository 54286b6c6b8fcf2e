import type { IntentRecord } from '../../../journal/intent.js';
import type { BatchReopening, Reopening } from '../../../journal/journal-store.js';
import type { journalStatements } from './sql-journal-statements.js';
import type { JournalSqlBackend } from './sql-journal-store.js';

type Statements = ReturnType<typeof journalStatements>;
type Get = (key: string) => Promise<IntentRecord | undefined>;

/**
 * Runs a write of an intent and answers its row count: alone, or for an intent with an ordering
 * key on a backend with an ordering lock, after that lock in one transaction (journal-ordering.ts).
 */
export async function orderedWrite<Tx>(
  backend: JournalSqlBackend<Tx>,
  ready: () => Promise<void>,
  orderingKey: string | null,
  statement: string,
  params: readonly unknown[],
): Promise<number> {
  await ready();
  const lock = orderingKey === null ? undefined : backend.orderingLock;
  if (lock === undefined) return (await backend.query(statement, params)).changes;
  return backend.transaction(async (q) => {
    await q(lock, [orderingKey]);
    return (await q(statement, params)).changes;
  });
}

/** `reopen`: a finished intent pending again; an ordered one at the back of its key's queue. */
export async function reopenOne<Tx>(
  backend: JournalSqlBackend<Tx>,
  ready: () => Promise<void>,
  sql: Statements,
  get: Get,
  key: string,
  reopening: Reopening,
): Promise<boolean> {
  const current = await get(key);
  if (!current) return false;
  const policy = JSON.stringify({ ...current.policy, maxAttempts: reopening.maxAttempts });
  const params = [key, policy, reopening.deadlineAt, reopening.nextAttemptAt];
  return (await orderedWrite(backend, ready, current.orderingKey, sql.reopen, params)) === 1;
}

/**
 * `reopenMany` (a replay): unordered intents in one statement. An ordered one needs a new seq
 * each, under its key's lock, so it goes one at a time through `orderedWrite`: a batch would give
 * two intents of one key the same place in its queue.
 */
export async function reopenBatch<Tx>(
  backend: JournalSqlBackend<Tx>,
  ready: () => Promise<void>,
  sql: Statements,
  get: Get,
  reopenings: readonly BatchReopening[],
): Promise<boolean[]> {
  if (reopenings.length === 0) return [];
  const rows = reopenings.map((r) => ({
    key: r.key,
    attempt_count: r.attemptCount,
    policy: JSON.stringify(r.policy),
    deadline_at: r.deadlineAt,
    next_at: r.nextAttemptAt,
  }));
  await ready();
  const { rows: done } = await backend.query(sql.reopenMany, [JSON.stringify(rows)]);
  const reopened = new Set(done.map((row) => String(row['key'])));
  for (const r of reopenings) {
    if (reopened.has(r.key)) continue;
    const current = await get(r.key);
    if (current?.orderingKey == null || current.attemptCount !== r.attemptCount) continue;
    const params = [r.key, JSON.stringify(r.policy), r.deadlineAt, r.nextAttemptAt];
    if ((await orderedWrite(backend, ready, current.orderingKey, sql.reopen, params)) === 1)
      reopened.add(r.key);
  }
  return reopenings.map((r) => reopened.has(r.key));
}
