import { CLAIMED_COLUMNS, INTENT_INSERT_COLUMNS } from './journal-row.js';
import type { JournalSqlBackend, JsonColumn } from './sql-journal-store.js';
import { orderedTurn, reopenedSeq } from './journal-ordering.js';
import { attemptsListing, insertEndedAttempts } from './open-attempt.js';

export const START_COLUMNS: readonly JsonColumn[] = [
  { name: 'key', type: 'text' },
  { name: 'token', type: 'text' },
  { name: 'attempt', type: 'bigint' },
  { name: 'worker', type: 'text' },
  { name: 'started_at', type: 'bigint' },
];
export const SETTLE_COLUMNS: readonly JsonColumn[] = [
  { name: 'key', type: 'text' },
  { name: 'token', type: 'text' },
  { name: 'state', type: 'text' },
  { name: 'next_at', type: 'bigint' },
  { name: 'previous_delay', type: 'bigint' },
  { name: 'saw_unknown', type: 'bigint' },
  { name: 'stop_reason', type: 'text' },
  { name: 'final_status', type: 'bigint' },
  { name: 'final_body', type: 'text' },
  { name: 'final_detail', type: 'text' },
  { name: 'finished_at', type: 'bigint' },
];
export const REOPEN_COLUMNS: readonly JsonColumn[] = [
  { name: 'key', type: 'text' },
  { name: 'attempt_count', type: 'bigint' },
  { name: 'policy', type: 'text' },
  { name: 'deadline_at', type: 'bigint' },
  { name: 'next_at', type: 'bigint' },
];
export const END_COLUMNS: readonly JsonColumn[] = [
  { name: 'key', type: 'text' },
  { name: 'attempt', type: 'bigint' },
  { name: 'ended_at', type: 'bigint' },
  { name: 'outcome', type: 'text' },
  { name: 'status', type: 'bigint' },
  { name: 'detail', type: 'text' },
  { name: 'delay_ms', type: 'bigint' },
  // The attempt log (attempt-log-columns.ts).
  { name: 'duration_ms', type: 'bigint' },
  { name: 'response_headers', type: 'text' },
  { name: 'response_body', type: 'text' },
  { name: 'response_truncated', type: 'bigint' },
];

/** The journal's statements on `backend`'s dialect (one set for SQLite and PostgreSQL). */
export function journalStatements<Tx>(backend: JournalSqlBackend<Tx>) {
  const { intents, attempts } = backend;
  // FIFO per ordering key: a claim (and the next due instant) passes over an intent whose turn
  // has not come (journal-ordering.ts).
  const turn = orderedTurn(intents, intents);
  const dueOf = `MIN(CASE WHEN lease_expires_at IS NOT NULL AND lease_expires_at > next_attempt_at THEN lease_expires_at ELSE next_attempt_at END)`;
  const insertSql = `INSERT INTO ${intents} (${INTENT_INSERT_COLUMNS.join(', ')}) VALUES (${INTENT_INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (key) DO NOTHING`;
  // A claim reads back what the worker needs of each intent, and whether its attempt is open.
  const claimed = `${CLAIMED_COLUMNS.join(', ')}, open_attempt`;
  const intentOf = rowsByKey(backend, intents, 'i', 'key = s.key AND lease_token = s.token');
  const settleSql = (returning: string) =>
    `UPDATE ${intents} AS i SET state = s.state, next_attempt_at = COALESCE(s.next_at, i.next_attempt_at), previous_delay_ms = COALESCE(s.previous_delay, i.previous_delay_ms), saw_unknown = s.saw_unknown, stop_reason = s.stop_reason, final_status = s.final_status, final_body = ${backend.fromHex('s.final_body')}, final_detail = s.final_detail, finished_at = s.finished_at, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL FROM ${backend.jsonRows('$1', SETTLE_COLUMNS)}${intentOf.from} WHERE ${intentOf.where} RETURNING ${returning}`;
  return {
    insert: insertSql,
    get: `SELECT * FROM ${intents} WHERE key = $1`,
    attempts: attemptsListing(intents, attempts),
    counts: `SELECT state, COUNT(*) AS n FROM ${intents} GROUP BY state`,
    backlog: `SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM ${intents} WHERE state = 'pending'`,
    // One statement: pick the due rows (PostgreSQL skips rows another worker is claiming) and
    // lease them, so a claim is one round trip and atomic without an explicit transaction.
    claim: `UPDATE ${intents} SET lease_owner = $1, lease_token = $2, lease_expires_at = $3 WHERE key IN (SELECT key FROM ${intents} WHERE state = 'pending' AND next_attempt_at <= $4 AND (lease_expires_at IS NULL OR lease_expires_at <= $4) AND ${turn} ORDER BY next_attempt_at, seq LIMIT $5${backend.lockClause}) RETURNING ${claimed}`,
    claimOne: `UPDATE ${intents} SET lease_owner = $1, lease_token = $2, lease_expires_at = $3 WHERE key IN (SELECT key FROM ${intents} WHERE key = $6 AND state = 'pending' AND next_attempt_at <= $4 AND (lease_expires_at IS NULL OR lease_expires_at <= $4) AND ${turn} LIMIT $5${backend.lockClause}) RETURNING ${claimed}`,
    // A batch in one statement each: the attempts' starts (the intent rows alone: open-attempt.ts),
    // the settlements, the attempts' ends (their rows, written closed).
    start: `UPDATE ${intents} AS i SET attempt_count = s.attempt, open_attempt = 1, attempt_worker = s.worker, attempt_started_at = s.started_at FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token AND i.open_attempt = 0 RETURNING ${backend.returningKey}`,
    settle: settleSql(backend.returningKey),
    // The intents settled, then their attempts' rows from what the intent rows say of them.
    settleCte: `WITH settled AS (${settleSql('i.key AS key, i.attempt_worker AS attempt_worker, i.attempt_started_at AS attempt_started_at')}), ended AS (${insertEndedAttempts(
      attempts,
      {
        from: `${backend.jsonRows('$2', END_COLUMNS)} JOIN settled AS st ON st.key = s.key`,
        worker: 'st.attempt_worker',
        startedAt: 'st.attempt_started_at',
      },
      backend.fromHex,
      END_COLUMNS,
    )}) SELECT key FROM settled`,
    // Where one statement cannot write two tables: after `settle`, in its transaction, for the
    // settled intents' ends alone.
    endRows: insertEndedAttempts(
      attempts,
      {
        from: `${backend.jsonRows('$1', END_COLUMNS)} JOIN ${intents} AS i ON i.key = s.key`,
        worker: 'i.attempt_worker',
        startedAt: 'i.attempt_started_at',
      },
      backend.fromHex,
      END_COLUMNS,
    ),
    cancel: `UPDATE ${intents} SET state = 'cancelled', stop_reason = $2, final_detail = $3, finished_at = $4, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE key = $1 AND state = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= $4)`,
    reopen: `UPDATE ${intents} SET ${reopenedSeq(backend.nextSeq)}, state = 'pending', policy = $2, deadline_at = $3, next_attempt_at = $4, previous_delay_ms = 0, stop_reason = NULL, final_status = NULL, final_body = NULL, final_detail = NULL, finished_at = NULL WHERE key = $1 AND state NOT IN ('pending', 'delivered')`,
    reopenMany: `UPDATE ${intents} AS i SET state = 'pending', policy = s.policy, deadline_at = s.deadline_at, next_attempt_at = s.next_at, previous_delay_ms = 0, stop_reason = NULL, final_status = NULL, final_body = NULL, final_detail = NULL, finished_at = NULL FROM ${backend.jsonRows('$1', REOPEN_COLUMNS)} WHERE i.key = s.key AND i.attempt_count = s.attempt_count AND i.state NOT IN ('pending', 'delivered') AND i.ordering_key IS NULL RETURNING ${backend.returningKey}`,
    nextDue: `SELECT ${dueOf} AS at FROM ${intents} WHERE state = 'pending' AND ${turn}`,
    // The same from the claim mark on ($1, $2: claim-mark.ts), past the settled rows behind it;
    // only when nothing is pending there, from the start (an InitPlan runs when first needed).
    nextDueFrom: `SELECT ahead, CASE WHEN ahead IS NULL THEN (SELECT ${dueOf} FROM ${intents} WHERE state = 'pending' AND ${turn}) END AS at FROM (SELECT ${dueOf} AS ahead FROM ${intents} WHERE state = 'pending' AND (next_attempt_at, seq) >= ($1, $2) AND ${turn}) AS a`,
  };
}

/**
 * How a batch statement finds each of its rows in `table` (aliased `alias`) by `match` against the
 * batch relation `s`: on PostgreSQL one index lookup per batch row, joined by the row's address
 * (a row updated since the lookup's snapshot is not at it: the statement leaves it, as a lost lease),
 * as a planner that cannot count a JSON batch's rows may hash the whole table instead (a drain's
 * settle read every row of its table); elsewhere a plain join.
 */
function rowsByKey<Tx>(
  backend: JournalSqlBackend<Tx>,
  table: string,
  alias: string,
  match: string,
): { from: string; where: string } {
  if (!backend.lateralLookup)
    return { from: '', where: match.replaceAll(/(^|AND )(\w+) =/g, `$1${alias}.$2 =`) };
  const k = `${alias}_row`;
  // OFFSET 0 keeps the subquery apart: one lookup for each batch row, never a join of the table.
  return {
    from: ` CROSS JOIN LATERAL (SELECT ctid AS row_id FROM ${table} WHERE ${match} OFFSET 0) AS ${k}`,
    where: `${alias}.ctid = ${k}.row_id`,
  };
}
