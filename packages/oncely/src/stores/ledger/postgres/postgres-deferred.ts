import type { CompletedEntry } from '../../../ledger/ledger-entry.js';
import { DeferredWriteError, type DeferredWrite } from '../../../ledger/deferred-writes.js';
import { neutralParams } from '../../../ledger/sql-handle.js';
import type { PgPool, PgPoolClient, PgQueryConfig } from '../../postgres-driver/pg-pool.js';
import { columnArrays, postgresClaimFunction } from './postgres-claim.js';
import type { PostgresLedgerTables } from './postgres-tombstones.js';
import { preparedByText } from '../../postgres-driver/prepared-by-text.js';
import {
  expectCommitted,
  resultOf,
  sendStatements,
} from '../../postgres-driver/send-statements.js';
import { connectHeard } from '../../postgres-driver/connect-heard.js';

/** One request's deferred commit: its completed entry and the writes that commit with it. */
export interface DeferredMember {
  readonly entry: CompletedEntry;
  readonly writes: readonly DeferredWrite[];
}

/**
 * Committed, or not because some members' keys had a row already: `found` holds their places in
 * the members (0-based). Then nothing was written, for any member.
 */
export type DeferredCommitOutcome =
  | { readonly committed: true }
  | { readonly committed: false; readonly found: readonly number[] };

const COMMITTED: DeferredCommitOutcome = { committed: true };

/**
 * Commits members' completed entries and deferred writes in one transaction, in two round trips
 * (on a pipelining pool; one per statement elsewhere), both through sendStatements:
 * 1. BEGIN and the rows: the claim function (postgres-claim.ts) takes the keys' advisory locks
 *    (the ones claims take, in the same order, so claims and deferred commits of a key take turns
 *    and never wait on each other in a cycle), reads each key with a snapshot taken after the
 *    locks, inserts the row of each key that has none and returns the members whose key has one.
 *    The statement also sets the commit's level, like the receipt of a claimed key.
 * 2. When it returned none: the writes, in order, and COMMIT. The locks are held until then, so
 *    no claim of these keys can come between. When it returned some: ROLLBACK, nothing lands.
 * Found or not is read from the returned rows; no statement fails on purpose.
 *
 * Rejects with a DeferredWriteError when one of the writes failed (rolled back), or with the
 * driver's error when the store did.
 */
export type DeferredCommit = (
  pool: PgPool,
  members: readonly DeferredMember[],
) => Promise<DeferredCommitOutcome>;

export function postgresDeferredCommit(
  tables: PostgresLedgerTables,
  commitLevel: string,
  statementName: (purpose: string) => string,
): DeferredCommit {
  const claims = postgresClaimFunction(tables);
  const rowsText = `SELECT array_agg(found.i) AS found, (${commitLevel}) AS commit_level FROM ${claims.name}(${claims.args}) AS found`;
  const rowsName = statementName('deferred_rows');

  return async (pool, members) => {
    const rows: PgQueryConfig = {
      name: rowsName,
      text: rowsText,
      values: columnArrays(members.map((m) => m.entry)),
    };
    const client = await connectHeard(pool);
    let broken = false;
    try {
      const [begin, added] = await sendStatements(client, ['BEGIN', rows]);
      if (!begin!.ok) throw begin!.error;
      const found = foundIn(await orRollBack(client, () => resultOf(added)));
      if (found.length > 0) {
        await rollBack(client);
        return { committed: false, found };
      }
      await writeAndCommit(
        client,
        members.flatMap((m) => m.writes),
      );
      return COMMITTED;
    } catch (error) {
      if (!(error instanceof DeferredWriteError)) broken = true;
      throw error;
    } finally {
      client.release(broken);
    }
  };
}

/** The members (0-based) whose key had a row, from the rows' statement's one row. */
function foundIn(result: { rows: unknown[] }): number[] {
  const places = (result.rows[0] as { found?: unknown } | undefined)?.found;
  return Array.isArray(places) ? places.map((place) => Number(place) - 1) : [];
}

/** The writes in order, then COMMIT; a write's failure rolls back and is the effect's error. */
async function writeAndCommit(
  client: PgPoolClient,
  writes: readonly DeferredWrite[],
): Promise<void> {
  const statements = writes.map((w) => preparedByText(w.sql, neutralParams(w.params)));
  const answers = await sendStatements(client, [...statements, 'COMMIT']);
  const failedAt = answers.findIndex((answer) => !answer.ok);
  if (failedAt >= 0 && failedAt < writes.length) {
    // COMMIT behind it answered ROLLBACK already; ROLLBACK again only warns, and makes sure.
    await rollBack(client);
    const failed = answers[failedAt]!;
    throw new DeferredWriteError(writes[failedAt]!, failed.ok ? undefined : failed.error);
  }
  expectCommitted(answers.at(-1));
}

async function orRollBack<T>(client: PgPoolClient, read: () => T): Promise<T> {
  try {
    return read();
  } catch (error) {
    await rollBack(client).catch(() => {});
    throw error;
  }
}

async function rollBack(client: PgPoolClient): Promise<void> {
  resultOf((await sendStatements(client, ['ROLLBACK']))[0]);
}
