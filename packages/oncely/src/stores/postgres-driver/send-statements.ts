import { OncelyError } from '../../contract/errors.js';
import type { PgPoolClient, PgQueryConfig, PgQueryResult } from './pg-pool.js';

/** A statement as pg's `client.query` takes it: a text without parameters, or a named query. */
export type PgStatement = string | PgQueryConfig;

/** One statement's answer: its result, or the error the server (or the connection) gave. */
export type PgAnswer =
  | { readonly ok: true; readonly result: PgQueryResult }
  | { readonly ok: false; readonly error: unknown };

/**
 * The one way the PostgreSQL store talks to its server, for claimed and deferred writes alike:
 * `statements` on one client, answered in order, each answer settled (never a rejection).
 *
 * Only pg's public API: `client.query`. On a client of a pool made with pg's `pipeline: true`
 * option (pg 8.17 and later) every statement is queued at once, so the list costs one round
 * trip; elsewhere (pg 8.11 to 8.16, or a pool without the option) each statement goes after the
 * last one's answer, which pg requires (it warns about queued queries and drops its queue in
 * pg 9). The answers mean the same either way: each statement is its own protocol message with
 * its own Sync, so inside BEGIN a failure aborts the transaction and the statements behind it
 * fail with 25P02 (COMMIT then answers ROLLBACK), and outside BEGIN each statement is its own
 * transaction.
 */
export async function sendStatements(
  client: PgPoolClient,
  statements: readonly PgStatement[],
): Promise<PgAnswer[]> {
  if (pipelines(client)) return Promise.all(statements.map((s) => answerOf(client, s)));
  const answers: PgAnswer[] = [];
  for (const statement of statements) answers.push(await answerOf(client, statement));
  return answers;
}

/**
 * True for a client made with pg's `pipeline: true` option: pg keeps the option it was given as
 * the client's `pipeline` property, and versions without pipeline mode have no such property.
 */
export function pipelines(client: PgPoolClient): boolean {
  return (client as { pipeline?: unknown }).pipeline === true;
}

/** The result of an answer that must have succeeded; else its error, thrown. */
export function resultOf(answer: PgAnswer | undefined): PgQueryResult {
  if (answer === undefined) throw new Error('postgres: a statement was not answered');
  if (!answer.ok) throw answer.error;
  return answer.result;
}

/** The first failed answer's error, if any answer failed. */
export function firstFailure(answers: readonly PgAnswer[]): { error: unknown } | undefined {
  for (const answer of answers) if (!answer.ok) return { error: answer.error };
  return undefined;
}

/**
 * Throws unless a COMMIT's answer says it committed: PostgreSQL answers a COMMIT of an aborted
 * transaction with the tag `ROLLBACK`, not an error. A text of several statements ending in
 * COMMIT is answered with an array, the COMMIT's result last.
 */
export function expectCommitted(answer: PgAnswer | undefined): void {
  const result = resultOf(answer);
  const last = Array.isArray(result) ? (result.at(-1) as PgQueryResult) : result;
  if ((last as { command?: unknown }).command === 'ROLLBACK')
    throw new OncelyError('commit_failed', 'postgres: the transaction rolled back at COMMIT');
}

function answerOf(client: PgPoolClient, statement: PgStatement): Promise<PgAnswer> {
  const answer = typeof statement === 'string' ? client.query(statement) : client.query(statement);
  return answer.then(
    (result): PgAnswer => ({ ok: true, result }),
    (error: unknown): PgAnswer => ({ ok: false, error }),
  );
}
