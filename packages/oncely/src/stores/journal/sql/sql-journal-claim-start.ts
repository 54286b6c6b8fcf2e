import type { JournalCapabilities } from '../../../journal/journal-store.js';
import type { AttemptStart, ClaimedIntent } from '../../../journal/intent.js';
import { orderedTurn } from './journal-ordering.js';
import { CLAIMED_COLUMNS, rowToIntent } from './journal-row.js';
import type { ClaimMark } from './claim-mark.js';
import { START_COLUMNS } from './sql-journal-statements.js';
import type { JournalQuery, JournalSqlBackend } from './sql-journal-store.js';

/**
 * A claim that also starts each claimed intent's next attempt, in one statement: the lease, the
 * attempt count, the open attempt and who started it when, in one row version; the attempt's own
 * row is written when it ends (open-attempt.ts). The worker then needs no startAttempts statement
 * for a batch, and each intent leaves one dead row version fewer behind it (claim, start and
 * settle were three). An intent whose last attempt is open (`interrupted`) is leased as a plain
 * claim leases it: its worker settles that attempt first. Intents the worker then does not send
 * (stopped by their deadline or budget, held by their endpoint, a secret missing) are given back
 * by `unstart`.
 *
 * The due rows are picked in the UPDATE's FROM, not in a WITH of their own: PostgreSQL locks a
 * statement's tables in the order it reads them, and a WITH read first would take the intents
 * table's row-share lock before the UPDATE's row-exclusive one, an upgrade that deadlocks with
 * another process's ALTER TABLE in ready() waiting between the two.
 */
export function claimStartStatements<Tx>(backend: JournalSqlBackend<Tx>) {
  const { intents } = backend;
  const turn = orderedTurn(intents, intents);
  // The picked rows are joined by their row version's address: one TID fetch each, where a join
  // on the key could be planned as a hash join over the whole table. A row updated and committed
  // between the snapshot and its lock is not seen at that address: left for the next claim.
  const claimed = (picked: string): string =>
    `claimed AS (UPDATE ${intents} AS i SET lease_owner = $1, lease_token = $2, lease_expires_at = $3, ${startingSet('p.was_open', 'i.')} FROM (${picked}${backend.lockClause}) AS p WHERE i.ctid = p.row_id RETURNING ${CLAIMED_COLUMNS.map((c) => `i.${c}`).join(', ')}, p.was_open AS was_open)`;
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
    unstart: unstartStatement(backend),
  };
}

/**
 * The SET of a claim that starts attempts: each intent's next attempt opened, by $1 at $4, unless
 * its last one is open (`wasOpen` 1: interrupted), whose count, worker and start it keeps.
 * Every expression reads the row as it was (`row`: how the statement names its columns).
 */
function startingSet(wasOpen: string, row: string): string {
  return `attempt_count = ${row}attempt_count + 1 - ${wasOpen}, open_attempt = 1, attempt_worker = CASE WHEN ${wasOpen} = 0 THEN $1 ELSE ${row}attempt_worker END, attempt_started_at = CASE WHEN ${wasOpen} = 0 THEN $4 ELSE ${row}attempt_started_at END`;
}

/** Takes back attempts never sent: the count back down. No attempt row was written for them. */
function unstartStatement<Tx>(backend: JournalSqlBackend<Tx>): string {
  return `UPDATE ${backend.intents} AS i SET attempt_count = s.attempt - 1, open_attempt = 0 FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token AND i.open_attempt = 1 AND i.attempt_count = s.attempt RETURNING ${backend.returningKey}`;
}

/**
 * claimStarting where a statement's RETURNING cannot see the row as it was (SQLite): the due rows
 * picked with whether their attempt is open, then leased and started by key, one write a row.
 */
function pickThenStartStatements<Tx>(backend: JournalSqlBackend<Tx>) {
  const { intents } = backend;
  const due = `state = 'pending' AND next_attempt_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at <= $1) AND ${orderedTurn(intents, intents)}`;
  return {
    pick: `SELECT key, open_attempt FROM ${intents} WHERE ${due} ORDER BY next_attempt_at, seq LIMIT $2`,
    pickOne: `SELECT key, open_attempt FROM ${intents} WHERE key = $3 AND ${due} LIMIT $2`,
    // $5: the picked rows' keys, a JSON array.
    leaseStarting: `UPDATE ${intents} SET lease_owner = $1, lease_token = $2, lease_expires_at = $3, ${startingSet('open_attempt', '')} WHERE key IN (SELECT value FROM json_each($5)) RETURNING ${CLAIMED_COLUMNS.join(', ')}`,
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
  query: JournalQuery,
  ready: () => Promise<void>,
  leaseToken: (owner: string, nowMs: number) => string,
  mark: ClaimMark,
): NonNullable<JournalCapabilities['claimStarting']> {
  const oneStatement = backend.writableCte ? claimStartStatements(backend) : undefined;
  const picking = oneStatement ? undefined : pickThenStartStatements(backend);
  const unstart = unstartStatement(backend);
  return {
    claim: async (...args) => {
      const token = leaseToken(args[0], args[1]);
      if (oneStatement) return claimStartingIn(query, oneStatement, mark, token, args);
      await ready();
      return claimStartingInTransaction(backend, picking!, token, args);
    },
    unstart: async (starts) => {
      if (starts.length === 0) return [];
      const { rows } = await query(unstart, [JSON.stringify(starts.map(startRow))]);
      const keys = new Set(rows.map((row) => String(row['key'])));
      return starts.map((x) => keys.has(x.key));
    },
  };
}

/**
 * claimStarting where RETURNING shows only the row as written (SQLite): the due rows picked, then
 * leased and started, in one transaction (one commit), each intent row written once.
 */
export async function claimStartingInTransaction<Tx>(
  backend: JournalSqlBackend<Tx>,
  sql: ReturnType<typeof pickThenStartStatements>,
  token: string,
  args: ClaimArgs,
): Promise<ClaimedIntent[]> {
  const [owner, nowMs, leaseMs, limit, onlyKey] = args;
  return backend.transaction(async (q) => {
    const { rows: picked } =
      onlyKey === undefined
        ? await q(sql.pick, [nowMs, limit])
        : await q(sql.pickOne, [nowMs, limit, onlyKey]);
    if (picked.length === 0) return [];
    const wasOpen = new Map(picked.map((row) => [String(row['key']), Number(row['open_attempt'])]));
    const keys = JSON.stringify([...wasOpen.keys()]);
    const { rows } = await q(sql.leaseStarting, [owner, token, nowMs + leaseMs, nowMs, keys]);
    return rows
      .map((row) => asClaimed(row, wasOpen.get(String(row['key'])) === 0, token))
      .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt);
  });
}

/**
 * A claimed row as the worker gets it: the intent as before this claim's attempt started (its
 * count before it), marked `started`, or `interrupted` when its last attempt was open.
 * The driver's row is this call's own: changed in place rather than copied for each intent.
 */
function asClaimed(row: Record<string, unknown>, started: boolean, token: string): ClaimedIntent {
  row['attempt_count'] = Number(row['attempt_count']) - (started ? 1 : 0);
  row['open_attempt'] = started ? 0 : 1;
  return { intent: rowToIntent(row), token, interrupted: !started, started };
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
    const start = mark.startFor(nowMs);
    try {
      rows = (await query(sql.claimStart, [...params, start.from.at, start.from.seq])).rows;
    } catch (error) {
      mark.abandon(start);
      throw error;
    }
    const first = rows[0];
    const lowest =
      first === undefined || first['mark_at'] == null
        ? undefined
        : { at: Number(first['mark_at']), seq: Number(first['mark_seq']) };
    mark.advance(nowMs, start, lowest);
    rows = rows.filter((row) => row['key'] != null);
  }
  return rows
    .map((row) => asClaimed(row, Number(row['was_open']) === 0, token))
    .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt);
}
