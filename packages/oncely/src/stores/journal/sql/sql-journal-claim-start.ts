import type { JournalCapabilities } from '../../../journal/journal-store.js';
import type { AttemptStart, ClaimedIntent } from '../../../journal/intent.js';
import { orderedTurn } from './journal-ordering.js';
import { rowToIntent } from './journal-row.js';
import { createClaimMark, type ClaimMark } from './claim-mark.js';
import { START_COLUMNS, type journalStatements } from './sql-journal-statements.js';
import type { JournalQuery, JournalSqlBackend } from './sql-journal-store.js';

/**
 * A claim that also starts each claimed intent's next attempt, in one statement (PostgreSQL's
 * data-modifying WITH): the lease, the attempt count and the open attempt in one row version,
 * the attempt row beside it. The worker then needs no startAttempts statement for a batch, and
 * each intent leaves one dead row version fewer behind it (claim, start and settle were three).
 * An intent whose last attempt is open (`interrupted`) is leased as a plain claim leases it: its
 * worker settles that attempt first. Intents the worker then does not send (stopped by their
 * deadline or budget, held by their endpoint, a secret missing) are given back by `unstart`.
 *
 * The due rows are picked in the UPDATE's FROM, not in a WITH of their own: PostgreSQL locks a
 * statement's tables in the order it reads them, and a WITH read first would take the intents
 * table's row-share lock before the UPDATE's row-exclusive one, an upgrade that deadlocks with
 * another process's ALTER TABLE in ready() waiting between the two.
 */
export function claimStartStatements<Tx>(backend: JournalSqlBackend<Tx>) {
  const { intents, attempts } = backend;
  const turn = orderedTurn(intents, intents);
  // The picked rows are joined by their row version's address: one TID fetch each, where a join
  // on the key could be planned as a hash join over the whole table. A row updated and committed
  // between the snapshot and its lock is not seen at that address: left for the next claim.
  const claimed = (picked: string): string =>
    `claimed AS (UPDATE ${intents} AS i SET lease_owner = $1, lease_token = $2, lease_expires_at = $3, attempt_count = i.attempt_count + 1 - p.was_open, open_attempt = 1 FROM (${picked}${backend.lockClause}) AS p WHERE i.ctid = p.row_id RETURNING i.*, p.was_open AS was_open), started AS (INSERT INTO ${attempts} (key, attempt, worker, started_at) SELECT key, attempt_count, $1, $4 FROM claimed WHERE was_open = 0)`;
  const due = `state = 'pending' AND next_attempt_at <= $4 AND (lease_expires_at IS NULL OR lease_expires_at <= $4) AND ${turn}`;
  const from = `(next_attempt_at, seq) >= ($6, $7)`;
  // The lowest pending row at or after where the claim began, whatever its lease (claim-mark.ts).
  const lowest = `lowest AS (SELECT next_attempt_at AS mark_at, seq AS mark_seq FROM ${intents} WHERE state = 'pending' AND ${from} ORDER BY next_attempt_at, seq LIMIT 1)`;
  return {
    // One row per claimed intent with the mark beside it; one row of NULLs but the mark when none.
    claimStart: `WITH ${claimed(
      `SELECT ctid AS row_id, open_attempt AS was_open FROM ${intents} WHERE ${from} AND ${due} ORDER BY next_attempt_at, seq LIMIT $5`,
    )}, ${lowest} SELECT claimed.*, lowest.* FROM (SELECT 1) AS one LEFT JOIN lowest ON true LEFT JOIN claimed ON true`,
    claimStartOne: `WITH ${claimed(
      `SELECT ctid AS row_id, open_attempt AS was_open FROM ${intents} WHERE key = $6 AND ${due} LIMIT $5`,
    )} SELECT * FROM claimed`,
    unstart: `WITH undone AS (UPDATE ${intents} AS i SET attempt_count = s.attempt - 1, open_attempt = 0 FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token AND i.open_attempt = 1 AND i.attempt_count = s.attempt RETURNING i.key AS key, s.attempt AS attempt) DELETE FROM ${attempts} AS a USING undone AS u WHERE a.key = u.key AND a.attempt = u.attempt RETURNING a.key AS key`,
  };
}

type Statements = ReturnType<typeof claimStartStatements>;
type ClaimArgs = Parameters<NonNullable<JournalCapabilities['claimStarting']>['claim']>;

/**
 * The store's claimStarting capability: in one statement where a statement can write two tables
 * (PostgreSQL), else in one transaction (SQLite).
 */
export function claimStartCapability<Tx>(
  backend: JournalSqlBackend<Tx>,
  sql: ReturnType<typeof journalStatements>,
  query: JournalQuery,
  ready: () => Promise<void>,
  leaseToken: (owner: string, nowMs: number) => string,
  mark: ClaimMark = createClaimMark(),
): NonNullable<JournalCapabilities['claimStarting']> {
  const oneStatement = backend.writableCte ? claimStartStatements(backend) : undefined;
  return {
    claim: async (...args) => {
      const token = leaseToken(args[0], args[1]);
      if (oneStatement) return claimStartingIn(query, oneStatement, mark, token, args);
      await ready();
      return claimStartingInTransaction(backend, sql, token, args);
    },
    unstart: async (starts) => {
      if (oneStatement) return unstartIn(query, oneStatement, starts);
      await ready();
      return unstartInTransaction(backend, starts);
    },
  };
}

/**
 * claimStarting where one statement cannot write two tables (SQLite): the claim, the starts and
 * the attempt rows in one transaction, so one commit (one fsync) where claim and start took two.
 */
export async function claimStartingInTransaction<Tx>(
  backend: JournalSqlBackend<Tx>,
  sql: ReturnType<typeof journalStatements>,
  token: string,
  args: ClaimArgs,
): Promise<ClaimedIntent[]> {
  const [owner, nowMs, leaseMs, limit, onlyKey] = args;
  const params = [owner, token, nowMs + leaseMs, nowMs, limit];
  return backend.transaction(async (q) => {
    const { rows } =
      onlyKey === undefined
        ? await q(sql.claim, params)
        : await q(sql.claimOne, [...params, onlyKey]);
    const fresh = rows.filter((row) => Number(row['open_attempt']) === 0);
    if (fresh.length > 0) {
      const starts = JSON.stringify(
        fresh.map((row) => ({
          key: row['key'],
          token,
          attempt: Number(row['attempt_count']) + 1,
          worker: owner,
          started_at: nowMs,
        })),
      );
      await q(sql.start, [starts]);
      await q(sql.startRows, [starts]);
    }
    return rows
      .map((row) => {
        const started = Number(row['open_attempt']) === 0;
        return { intent: rowToIntent(row), token, interrupted: !started, started };
      })
      .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt);
  });
}

/** unstartAttempts in one transaction (SQLite): the counts back down, then the attempt rows gone. */
export async function unstartInTransaction<Tx>(
  backend: JournalSqlBackend<Tx>,
  starts: readonly AttemptStart[],
): Promise<boolean[]> {
  if (starts.length === 0) return [];
  const { intents, attempts } = backend;
  const rows = JSON.stringify(starts.map(startRow));
  const undone = await backend.transaction(async (q) => {
    const { rows: keys } = await q(
      `UPDATE ${intents} AS i SET attempt_count = s.attempt - 1, open_attempt = 0 FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token AND i.open_attempt = 1 AND i.attempt_count = s.attempt RETURNING ${backend.returningKey}`,
      [rows],
    );
    const done = new Set(keys.map((row) => String(row['key'])));
    const gone = JSON.stringify(starts.filter((x) => done.has(x.key)).map(startRow));
    if (done.size > 0)
      await q(
        `DELETE FROM ${attempts} WHERE EXISTS (SELECT 1 FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE s.key = ${attempts}.key AND s.attempt = ${attempts}.attempt)`,
        [gone],
      );
    return done;
  });
  return starts.map((x) => undone.has(x.key));
}

const startRow = (x: AttemptStart) => ({
  key: x.key,
  token: x.token,
  attempt: x.attempt,
  worker: x.worker,
  started_at: x.startedAt,
});

/** claimStarting: the claimed intents as before their attempt started, each marked `started`. */
export async function claimStartingIn(
  query: JournalQuery,
  sql: Statements,
  mark: ClaimMark,
  token: string,
  args: ClaimArgs,
): Promise<ClaimedIntent[]> {
  const [owner, nowMs, leaseMs, limit, onlyKey] = args;
  const params = [owner, token, nowMs + leaseMs, nowMs, limit];
  let rows: Record<string, unknown>[];
  if (onlyKey !== undefined) rows = (await query(sql.claimStartOne, [...params, onlyKey])).rows;
  else {
    const from = mark.startFor(nowMs);
    rows = (await query(sql.claimStart, [...params, from.at, from.seq])).rows;
    const first = rows[0];
    const lowest =
      first === undefined || first['mark_at'] == null
        ? undefined
        : { at: Number(first['mark_at']), seq: Number(first['mark_seq']) };
    mark.advance(nowMs, from, lowest);
    rows = rows.filter((row) => row['key'] != null);
  }
  return rows
    .map((row) => {
      const started = Number(row['was_open']) === 0;
      // The intent as a plain claim returns it: its attempt count before this attempt.
      // The driver's row is this call's own: changed in place rather than copied for each intent.
      row['attempt_count'] = Number(row['attempt_count']) - (started ? 1 : 0);
      row['open_attempt'] = started ? 0 : 1;
      return {
        intent: rowToIntent(row),
        token,
        interrupted: !started,
        started,
      };
    })
    .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt);
}

/** Takes back attempts claimStarting started that were never sent: true for each taken back. */
export async function unstartIn(
  query: JournalQuery,
  sql: Statements,
  starts: readonly AttemptStart[],
): Promise<boolean[]> {
  if (starts.length === 0) return [];
  const { rows: undone } = await query(sql.unstart, [JSON.stringify(starts.map(startRow))]);
  const keys = new Set(undone.map((row) => String(row['key'])));
  return starts.map((x) => keys.has(x.key));
}
