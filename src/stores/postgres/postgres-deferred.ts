import { OncelyError } from '../../contract/errors.js';
import type { CompletedEntry } from '../../ledger/ledger-entry.js';
import { DeferredWriteError, type DeferredWrite } from '../../ledger/deferred-writes.js';
import { neutralParams } from '../../ledger/sql-handle.js';
import { LEDGER_COLUMNS, entryValues } from '../ledger-row.js';
import type { PgPool, PgPoolClient, PgQueryConfig, PgQueryResult } from './pg-pool.js';
import type { PostgresLedgerTables } from './postgres-tombstones.js';
import { preparedByText } from './prepared-by-text.js';
import { pipelines, RECEIPT_LOST, settledLater, together } from './postgres-transaction.js';

/**
 * Commits a completed entry and its deferred writes in one transaction: BEGIN, the key's advisory
 * lock, the entry's row unless (scope, key) has one, the writes, COMMIT. On a pool made with
 * `pipeline: true` they go out in one write and come back in one round trip; elsewhere one by one.
 *
 * The lock is the one claims take (postgres-claim.ts: the same two keys), so a concurrent claim or
 * deferred commit of the key waits for this transaction, and the row's INSERT, a statement of its
 * own, reads with a snapshot taken after the lock: it sees a row committed meanwhile. When the key
 * has a row, the INSERT divides by the rows it added and fails with 22012 (RECEIPT_LOST); every
 * statement behind it then fails and COMMIT answers ROLLBACK, so the writes never land. The INSERT
 * also sets the commit's level, like the receipt of a claimed key.
 *
 * Resolves true once committed, false when the key had a row; rejects with a DeferredWriteError
 * when one of the writes failed (rolled back), or with the driver's error when the store did.
 */
export type DeferredCommit = (
  pool: PgPool,
  entry: CompletedEntry,
  writes: readonly DeferredWrite[],
) => Promise<boolean>;

export function postgresDeferredCommit(
  tables: PostgresLedgerTables,
  commitLevel: string,
  statementName: (purpose: string) => string,
): DeferredCommit {
  const table = tables.live;
  const columns = LEDGER_COLUMNS.join(', ');
  const values = LEDGER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  const scopeAt = LEDGER_COLUMNS.indexOf('scope') + 1;
  const keyAt = LEDGER_COLUMNS.indexOf('key') + 1;
  const lockText = `SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2 || chr(31) || $3))`;
  const insertText = `WITH added AS (INSERT INTO ${table} (${columns}) SELECT ${values} WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE scope = $${scopeAt} AND key = $${keyAt}) RETURNING 1) SELECT 1 / count(*)::int AS added, (${commitLevel}) AS commit_level FROM added`;
  const lockName = statementName('deferred_lock');
  const insertName = statementName('deferred_insert');

  return async (pool, entry, writes) => {
    const row = entryValues(entry);
    const statements: Array<string | PgQueryConfig> = [
      'BEGIN',
      { name: lockName, text: lockText, values: [table, entry.scope, entry.key] },
      { name: insertName, text: insertText, values: row },
      ...writes.map((w) => preparedByText(w.sql, neutralParams(w.params))),
      'COMMIT',
    ];
    const client = await pool.connect();
    let broken = false;
    try {
      const answers = pipelines(client)
        ? together(client, () => statements.map((s) => settledLater(send(client, s))))
        : await oneByOne(client, statements);
      return (await settle(answers, writes)) === 'committed';
    } catch (error) {
      if (!(error instanceof DeferredWriteError)) broken = true;
      throw error;
    } finally {
      client.release(broken);
    }
  };
}

function send(client: PgPoolClient, statement: string | PgQueryConfig): Promise<PgQueryResult> {
  return typeof statement === 'string' ? client.query(statement) : client.query(statement);
}

/**
 * Without pipeline mode: each statement after the last one's answer; after a failure only ROLLBACK
 * is sent (in place of what was left), so the answers line up as in a pipeline.
 */
async function oneByOne(
  client: PgPoolClient,
  statements: ReadonlyArray<string | PgQueryConfig>,
): Promise<Array<Promise<PgQueryResult>>> {
  const answers: Array<Promise<PgQueryResult>> = [];
  for (const [i, statement] of statements.entries()) {
    const answer = settledLater(send(client, statement));
    answers.push(answer);
    try {
      await answer;
    } catch {
      // COMMIT itself failed: its answer is the last one, nothing is left to roll back.
      if (i === statements.length - 1) break;
      const rollback = settledLater(client.query('ROLLBACK'));
      for (let rest = i + 1; rest < statements.length - 1; rest++)
        answers.push(Promise.reject(new Error('not sent: an earlier statement failed')));
      answers.push(rollback.then(() => ({ rows: [], rowCount: null, command: 'ROLLBACK' })));
      for (const a of answers) a.catch(() => {});
      break;
    }
  }
  return answers;
}

/**
 * Reads the answers in order: BEGIN, lock, INSERT, writes…, COMMIT. 'lost' when the INSERT found
 * the key taken; a write's failure throws DeferredWriteError; BEGIN's, the lock's or COMMIT's the
 * driver's error.
 */
async function settle(
  answers: ReadonlyArray<Promise<PgQueryResult>>,
  writes: readonly DeferredWrite[],
): Promise<'committed' | 'lost'> {
  const [begin, lock, insert, ...rest] = answers;
  const commit = rest.pop()!;
  let failure: unknown;
  let lost = false;
  let writeFailure: DeferredWriteError | undefined;
  for (const [i, answer] of [begin!, lock!, insert!, ...rest].entries()) {
    try {
      await answer;
    } catch (error) {
      if (failure !== undefined || lost || writeFailure !== undefined) continue; // a consequence
      if (i === 2 && (error as { code?: unknown }).code === RECEIPT_LOST) lost = true;
      else if (i >= 3) writeFailure = new DeferredWriteError(writes[i - 3]!, error);
      else failure = error;
    }
  }
  const ended = await commit.catch((error: unknown) => {
    failure ??= error;
    return undefined;
  });
  if (failure !== undefined) throw failure;
  if (writeFailure !== undefined) throw writeFailure;
  if (lost) return 'lost';
  if ((ended as { command?: unknown } | undefined)?.command === 'ROLLBACK')
    throw new OncelyError('commit_failed', 'postgres: the transaction rolled back at COMMIT');
  return 'committed';
}
