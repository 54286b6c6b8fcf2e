import { emptyCounts, type IntentState } from '../journal/intent.js';
import type { JournalStore } from '../journal/journal-store.js';
import type { SqlHandle } from '../ledger/sql-handle.js';
import {
  INTENT_INSERT_COLUMNS,
  intentValues,
  rowToAttempt,
  rowToIntent,
  toBuffer,
} from './journal-row.js';

/** One statement's result: rows for a SELECT or RETURNING, changes for a write. */
export interface JournalQueryResult {
  readonly rows: Record<string, unknown>[];
  readonly changes: number;
}

/** A column of a JSON batch parameter. */
export interface JsonColumn {
  readonly name: string;
  readonly type: 'text' | 'bigint';
}

const START_COLUMNS: readonly JsonColumn[] = [
  { name: 'key', type: 'text' },
  { name: 'token', type: 'text' },
  { name: 'attempt', type: 'bigint' },
  { name: 'worker', type: 'text' },
  { name: 'started_at', type: 'bigint' },
];
const SETTLE_COLUMNS: readonly JsonColumn[] = [
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
const END_COLUMNS: readonly JsonColumn[] = [
  { name: 'key', type: 'text' },
  { name: 'attempt', type: 'bigint' },
  { name: 'ended_at', type: 'bigint' },
  { name: 'outcome', type: 'text' },
  { name: 'status', type: 'bigint' },
  { name: 'detail', type: 'text' },
  { name: 'delay_ms', type: 'bigint' },
];

/** Runs one `$1`-placeholder statement on some connection. */
export type JournalQuery = (
  sql: string,
  params?: readonly unknown[],
) => Promise<JournalQueryResult>;

/**
 * What a SQL backend gives the journal: statements that commit on their own, transactions that
 * keep one connection from BEGIN to COMMIT (durably: WAL flushed before it resolves), the caller's
 * own transaction for the transactional outbox, and the row lock that keeps two workers apart.
 */
export interface JournalSqlBackend<Tx> {
  readonly name: string;
  readonly intents: string;
  readonly attempts: string;
  /** DDL, run once by ready(). */
  readonly ddl: string;
  /** Appended to the claim's SELECT: ' FOR UPDATE SKIP LOCKED' on PostgreSQL; SQLite's BEGIN IMMEDIATE already excludes. */
  readonly lockClause: string;
  /**
   * A relation of the rows of a JSON array parameter, aliased `s`, with these typed columns: how
   * a batch of starts or settlements travels in one statement (PostgreSQL json_to_recordset,
   * SQLite json_each).
   */
  jsonRows(param: string, columns: readonly JsonColumn[]): string;
  /**
   * PostgreSQL runs a data-modifying WITH: a batch's intent rows and attempt rows are written in
   * one statement (one round trip, one commit); SQLite runs the two statements in a transaction.
   */
  readonly writableCte: boolean;
  /** RETURNING the updated row's key in an UPDATE … FROM (SQLite allows only the target's own, unqualified columns). */
  readonly returningKey: string;
  /** Bytes from a hex text column of such a relation. */
  fromHex(expression: string): string;
  setup(ddl: string): Promise<void>;
  query: JournalQuery;
  transaction<T>(fn: (query: JournalQuery) => Promise<T>): Promise<T>;
  within(tx: Tx): JournalQuery;
  close(): Promise<void>;
}

/**
 * The journal on a SQL backend (SQLite or PostgreSQL): one set of statements, a backend for each
 * driver. A claim is one transaction: pick due rows whose lease is free (PostgreSQL skips rows
 * another worker is claiming, FOR UPDATE SKIP LOCKED, as pg-boss and graphile-worker do), then
 * write the lease. Every later write names (key, lease_token): a worker whose lease expired and
 * was taken over cannot overwrite the new owner's work.
 */
export function createSqlJournalStore<Tx>(
  backend: JournalSqlBackend<Tx>,
): JournalStore<Tx | SqlHandle> {
  const { intents, attempts } = backend;
  let readied: Promise<void> | undefined;
  const ready = (): Promise<void> =>
    (readied ??= backend.setup(backend.ddl).catch((error: unknown) => {
      readied = undefined;
      throw error;
    }));
  const insertSql = `INSERT INTO ${intents} (${INTENT_INSERT_COLUMNS.join(', ')}) VALUES (${INTENT_INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (key) DO NOTHING`;
  const settleSql = `UPDATE ${intents} AS i SET state = s.state, next_attempt_at = COALESCE(s.next_at, i.next_attempt_at), previous_delay_ms = COALESCE(s.previous_delay, i.previous_delay_ms), saw_unknown = s.saw_unknown, stop_reason = s.stop_reason, final_status = s.final_status, final_body = ${backend.fromHex('s.final_body')}, final_detail = s.final_detail, finished_at = s.finished_at, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL FROM ${backend.jsonRows('$1', SETTLE_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token RETURNING ${backend.returningKey}`;
  const sql = {
    get: `SELECT * FROM ${intents} WHERE key = $1`,
    attempts: `SELECT * FROM ${attempts} WHERE key = $1 ORDER BY attempt`,
    listAll: `SELECT * FROM ${intents} ORDER BY seq DESC LIMIT $1`,
    listState: `SELECT * FROM ${intents} WHERE state = $2 ORDER BY seq DESC LIMIT $1`,
    counts: `SELECT state, COUNT(*) AS n FROM ${intents} GROUP BY state`,
    // One statement: pick the due rows (PostgreSQL skips rows another worker is claiming) and
    // lease them, so a claim is one round trip and atomic without an explicit transaction.
    claim: `UPDATE ${intents} SET lease_owner = $1, lease_token = $2, lease_expires_at = $3 WHERE key IN (SELECT key FROM ${intents} WHERE state = 'pending' AND next_attempt_at <= $4 AND (lease_expires_at IS NULL OR lease_expires_at <= $4) ORDER BY next_attempt_at, seq LIMIT $5${backend.lockClause}) RETURNING *`,
    claimOne: `UPDATE ${intents} SET lease_owner = $1, lease_token = $2, lease_expires_at = $3 WHERE key IN (SELECT key FROM ${intents} WHERE key = $6 AND state = 'pending' AND next_attempt_at <= $4 AND (lease_expires_at IS NULL OR lease_expires_at <= $4) LIMIT $5${backend.lockClause}) RETURNING *`,
    // A batch in one statement each: the attempts' starts, the settlements, the attempts' ends.
    start: `UPDATE ${intents} AS i SET attempt_count = s.attempt, open_attempt = 1 FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token AND i.open_attempt = 0 RETURNING ${backend.returningKey}`,
    startRows: `INSERT INTO ${attempts} (key, attempt, worker, started_at) SELECT s.key, s.attempt, s.worker, s.started_at FROM ${backend.jsonRows('$1', START_COLUMNS)}`,
    settle: settleSql,
    startCte: `WITH started AS (UPDATE ${intents} AS i SET attempt_count = s.attempt, open_attempt = 1 FROM ${backend.jsonRows('$1', START_COLUMNS)} WHERE i.key = s.key AND i.lease_token = s.token AND i.open_attempt = 0 RETURNING i.key AS key, s.attempt AS attempt, s.worker AS worker, s.started_at AS started_at) INSERT INTO ${attempts} (key, attempt, worker, started_at) SELECT key, attempt, worker, started_at FROM started RETURNING key`,
    settleCte: `WITH settled AS (${settleSql}), ended AS (UPDATE ${attempts} AS a SET ended_at = s.ended_at, outcome = s.outcome, status = s.status, detail = s.detail, delay_ms = s.delay_ms FROM ${backend.jsonRows('$2', END_COLUMNS)} WHERE a.key = s.key AND a.attempt = s.attempt AND a.key IN (SELECT key FROM settled)) SELECT key FROM settled`,
    endRows: `UPDATE ${attempts} AS a SET ended_at = s.ended_at, outcome = s.outcome, status = s.status, detail = s.detail, delay_ms = s.delay_ms FROM ${backend.jsonRows('$1', END_COLUMNS)} WHERE a.key = s.key AND a.attempt = s.attempt`,
    cancel: `UPDATE ${intents} SET state = 'cancelled', stop_reason = $2, final_detail = $3, finished_at = $4, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE key = $1 AND state = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at <= $4)`,
    reopen: `UPDATE ${intents} SET state = 'pending', policy = $2, deadline_at = $3, next_attempt_at = $4, previous_delay_ms = 0, stop_reason = NULL, final_status = NULL, final_body = NULL, final_detail = NULL, finished_at = NULL WHERE key = $1 AND state NOT IN ('pending', 'delivered')`,
    nextDue: `SELECT MIN(CASE WHEN lease_expires_at IS NOT NULL AND lease_expires_at > next_attempt_at THEN lease_expires_at ELSE next_attempt_at END) AS at FROM ${intents} WHERE state = 'pending'`,
  };
  const query: JournalQuery = async (text, params) => {
    await ready();
    return backend.query(text, params);
  };

  return {
    name: backend.name,
    ready,
    record: async (intent) => (await query(insertSql, intentValues(intent))).changes === 1,
    recordWithin: async (tx, intent) => {
      await ready();
      // The ledger's dialect-neutral handle (context.sql): the intent commits with the receipt.
      if (isSqlHandle(tx)) return (await tx.run(insertSql, intentValues(intent))).rowCount === 1;
      return (await backend.within(tx as Tx)(insertSql, intentValues(intent))).changes === 1;
    },
    async get(key) {
      const row = (await query(sql.get, [key])).rows[0];
      return row === undefined ? undefined : rowToIntent(row);
    },
    attempts: async (key) => (await query(sql.attempts, [key])).rows.map(rowToAttempt),
    async list(filter = {}) {
      const limit = filter.limit ?? 100;
      const result =
        filter.state === undefined
          ? await query(sql.listAll, [limit])
          : await query(sql.listState, [limit, filter.state]);
      return result.rows.map(rowToIntent);
    },
    async counts() {
      const counts = emptyCounts();
      for (const row of (await query(sql.counts)).rows)
        counts[String(row['state']) as IntentState] = Number(row['n']);
      return counts;
    },
    async claim(owner, nowMs, leaseMs, limit, onlyKey) {
      const token = `${owner}#${nowMs}#${(claims += 1)}`;
      const params = [owner, token, nowMs + leaseMs, nowMs, limit];
      const { rows } =
        onlyKey === undefined
          ? await query(sql.claim, params)
          : await query(sql.claimOne, [...params, onlyKey]);
      return rows
        .map((row) => ({
          intent: rowToIntent(row),
          token,
          interrupted: Number(row['open_attempt']) === 1,
        }))
        .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt);
    },
    async startAttempts(starts) {
      if (starts.length === 0) return [];
      await ready();
      const rows = starts.map((x) => ({
        key: x.key,
        token: x.token,
        attempt: x.attempt,
        worker: x.worker,
        started_at: x.startedAt,
      }));
      if (backend.writableCte) {
        const started = new Set(
          (await backend.query(sql.startCte, [JSON.stringify(rows)])).rows.map((row) =>
            String(row['key']),
          ),
        );
        return starts.map((x) => started.has(x.key));
      }
      return backend.transaction(async (q) => {
        const started = new Set(
          (await q(sql.start, [JSON.stringify(rows)])).rows.map((row) => String(row['key'])),
        );
        const ok = rows.filter((row) => started.has(row.key));
        if (ok.length > 0) await q(sql.startRows, [JSON.stringify(ok)]);
        return starts.map((x) => started.has(x.key));
      });
    },
    async settle(settlements) {
      if (settlements.length === 0) return [];
      await ready();
      const rows = settlements.map(({ key, token, next }) => {
        const final = next.state === 'pending' ? null : next.final;
        return {
          key,
          token,
          state: next.state,
          next_at: next.state === 'pending' ? next.nextAttemptAt : null,
          previous_delay: next.state === 'pending' ? next.previousDelayMs : null,
          saw_unknown: next.sawUnknown ? 1 : 0,
          stop_reason: final?.stopReason ?? null,
          final_status: final?.status ?? null,
          final_body: final?.body ? toBuffer(final.body).toString('hex') : null,
          final_detail: final?.detail ?? null,
          finished_at: final?.finishedAt ?? null,
        };
      });
      const ends = settlements
        .filter((x) => x.attempt !== undefined)
        .map(({ key, attempt: a }) => ({
          key,
          attempt: a!.attempt,
          ended_at: a!.endedAt,
          outcome: a!.outcome,
          status: a!.status,
          detail: a!.detail,
          delay_ms: a!.delayMs,
        }));
      const keysOf = (result: JournalQueryResult): Set<string> =>
        new Set(result.rows.map((row) => String(row['key'])));
      if (backend.writableCte) {
        const settled = keysOf(
          await backend.query(sql.settleCte, [JSON.stringify(rows), JSON.stringify(ends)]),
        );
        return settlements.map((x) => settled.has(x.key));
      }
      return backend.transaction(async (q) => {
        const settled = keysOf(await q(sql.settle, [JSON.stringify(rows)]));
        const settledEnds = ends.filter((end) => settled.has(end.key));
        if (settledEnds.length > 0) await q(sql.endRows, [JSON.stringify(settledEnds)]);
        return settlements.map((x) => settled.has(x.key));
      });
    },
    cancel: async (key, final, nowMs) =>
      (await query(sql.cancel, [key, final.stopReason, final.detail, nowMs])).changes === 1,
    async reopen(key, reopening) {
      const current = await this.get(key);
      if (!current) return false;
      const policy = JSON.stringify({ ...current.policy, maxAttempts: reopening.maxAttempts });
      return (
        (await query(sql.reopen, [key, policy, reopening.deadlineAt, reopening.nextAttemptAt]))
          .changes === 1
      );
    },
    async nextDueAt() {
      const at = (await query(sql.nextDue)).rows[0]?.['at'];
      return at === null || at === undefined ? undefined : Number(at);
    },
    close: () => backend.close(),
  };
}

let claims = 0;

function isSqlHandle(tx: unknown): tx is SqlHandle {
  return (
    typeof tx === 'object' &&
    tx !== null &&
    'dialect' in tx &&
    typeof (tx as SqlHandle).run === 'function'
  );
}
