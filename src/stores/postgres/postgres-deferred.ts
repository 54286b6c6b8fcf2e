import { OncelyError } from '../../contract/errors.js';
import type { CompletedEntry } from '../../ledger/ledger-entry.js';
import { DeferredWriteError, type DeferredWrite } from '../../ledger/deferred-writes.js';
import { neutralParams } from '../../ledger/sql-handle.js';
import type { PgPool, PgPoolClient, PgQueryConfig, PgQueryResult } from './pg-pool.js';
import { columnArrays, postgresClaimFunction } from './postgres-claim.js';
import type { PostgresLedgerTables } from './postgres-tombstones.js';
import { isOneSyncFailure, oneSyncSender } from './one-sync.js';
import { preparedByText } from './prepared-by-text.js';
import { pipelines, settledLater, together } from './postgres-transaction.js';
import { connectHeard } from './connect-heard.js';

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
 * Commits members' completed entries and deferred writes in one transaction: the rows of every
 * key that has none, then the writes in order. On a pg client they go out in one write as one
 * implicit transaction, one Sync and no BEGIN or COMMIT (one-sync.ts), and come back in one round
 * trip; on another client as BEGIN … COMMIT, pipelined on a pool made with `pipeline: true`,
 * elsewhere one by one.
 *
 * The rows go in through the claim function (postgres-claim.ts): it takes the keys' advisory
 * locks (the ones claims take, in the same order, so claims and deferred commits of a key take
 * turns and never wait on each other in a cycle), then reads each key with a snapshot taken after
 * the locks, so it sees a row committed meanwhile, and inserts the row of each key that has none.
 * When a key has one, the statement fails (FOUND_ERROR: a cast of a text naming the members that
 * found a row) and the transaction rolls back, so nothing lands. The statement also sets the
 * commit's level, like the receipt of a claimed key.
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
  const rowsText = `SELECT CASE WHEN count(*) = 0 THEN 1 ELSE CAST('${FOUND_MARK}' || string_agg(found.i::text, ',') AS integer) END AS added, (${commitLevel}) AS commit_level FROM ${claims.name}(${claims.args}) AS found`;
  const rowsName = statementName('deferred_rows');

  return async (pool, members) => {
    const writes = members.flatMap((m) => m.writes);
    const rows: PgQueryConfig = {
      name: rowsName,
      text: rowsText,
      values: columnArrays(members.map((m) => m.entry)),
    };
    const written = writes.map((w) => preparedByText(w.sql, neutralParams(w.params)));
    const client = await connectHeard(pool);
    let broken = false;
    try {
      const oneSync = oneSyncSender(client);
      if (oneSync !== undefined) return await settleOneSync(oneSync([rows, ...written]), writes);
      const statements = ['BEGIN', rows, ...written, 'COMMIT'];
      const answers = pipelines(client)
        ? together(client, () => statements.map((s) => settledLater(send(client, s))))
        : await oneByOne(client, statements);
      return await settle(answers, writes);
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
 * SQLSTATE 22P02 (invalid_text_representation) of the rows' statement, its message quoting the
 * text it could not cast: FOUND_MARK and the 1-based places of the members whose key had a row.
 * A statement cannot raise an error of its own choosing; a failed cast is one that carries data.
 */
const FOUND_ERROR = '22P02';
const FOUND_MARK = 'oncely-found:';
const FOUND_PLACES = new RegExp(`${FOUND_MARK}([0-9,]+)`);

/** The members (0-based) that found a row, if `error` is the rows' statement saying so. */
function foundIn(error: unknown): number[] | undefined {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== FOUND_ERROR || typeof message !== 'string') return undefined;
  const places = FOUND_PLACES.exec(message)?.[1];
  return places?.split(',').map((place) => Number(place) - 1);
}

/**
 * The same outcomes from one implicit transaction (one-sync.ts): the rows at place 0, the writes
 * behind them; a failure at the list's end is the commit's (or the connection's).
 */
async function settleOneSync(
  sent: Promise<void>,
  writes: readonly DeferredWrite[],
): Promise<DeferredCommitOutcome> {
  try {
    await sent;
    return COMMITTED;
  } catch (error) {
    if (!isOneSyncFailure(error)) throw error;
    const { failedAt } = error;
    if (failedAt === 0) {
      const found = foundIn(error);
      if (found !== undefined) return { committed: false, found };
    }
    if (failedAt >= 1 && failedAt <= writes.length)
      throw new DeferredWriteError(writes[failedAt - 1]!, error);
    throw error;
  }
}

/**
 * Reads the answers of BEGIN … COMMIT in order: BEGIN, the rows, writes…, COMMIT. Not committed,
 * with the members that found a row, when the rows' statement found keys taken; a write's failure
 * throws DeferredWriteError; BEGIN's, the rows' (but for keys taken) or COMMIT's the driver's
 * error.
 */
async function settle(
  answers: ReadonlyArray<Promise<PgQueryResult>>,
  writes: readonly DeferredWrite[],
): Promise<DeferredCommitOutcome> {
  const [begin, rows, ...rest] = answers;
  const commit = rest.pop()!;
  let failure: unknown;
  let found: number[] | undefined;
  let writeFailure: DeferredWriteError | undefined;
  for (const [i, answer] of [begin!, rows!, ...rest].entries()) {
    try {
      await answer;
    } catch (error) {
      // A failure after the first one is its consequence (the transaction is aborted).
      if (failure !== undefined || found !== undefined || writeFailure !== undefined) continue;
      if (i === 1) found = foundIn(error);
      if (found !== undefined) continue;
      if (i >= 2) writeFailure = new DeferredWriteError(writes[i - 2]!, error);
      else failure = error;
    }
  }
  const ended = await commit.catch((error: unknown) => {
    failure ??= error;
    return undefined;
  });
  if (failure !== undefined) throw failure;
  if (writeFailure !== undefined) throw writeFailure;
  if (found !== undefined) return { committed: false, found };
  if ((ended as { command?: unknown } | undefined)?.command === 'ROLLBACK')
    throw new OncelyError('commit_failed', 'postgres: the transaction rolled back at COMMIT');
  return COMMITTED;
}
