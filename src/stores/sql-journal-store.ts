import { emptyCounts, type IntentState } from '../journal/intent.js';
import type { JournalStore } from '../journal/journal-store.js';
import { INTENT_INSERT_COLUMNS, intentValues, rowToAttempt, rowToIntent, toBuffer } from './journal-row.js';

/** One statement's result: rows for a SELECT or RETURNING, changes for a write. */
export interface JournalQueryResult {
  readonly rows: Record<string, unknown>[];
  readonly changes: number;
}

/** Runs one `$1`-placeholder statement on some connection. */
export type JournalQuery = (sql: string, params?: readonly unknown[]) => Promise<JournalQueryResult>;

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
export function createSqlJournalStore<Tx>(backend: JournalSqlBackend<Tx>): JournalStore<Tx> {
  const { intents, attempts } = backend;
  let readied: Promise<void> | undefined;
  const ready = (): Promise<void> => (readied ??= backend.setup(backend.ddl).catch((error: unknown) => {
    readied = undefined;
    throw error;
  }));
  const insertSql = `INSERT INTO ${intents} (${INTENT_INSERT_COLUMNS.join(', ')}) VALUES (${INTENT_INSERT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}) ON CONFLICT (key) DO NOTHING`;
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
    start: `UPDATE ${intents} SET attempt_count = $3, open_attempt = 1 WHERE key = $1 AND lease_token = $2 AND open_attempt = 0`,
    startRow: `INSERT INTO ${attempts} (key, attempt, worker, started_at) VALUES ($1, $2, $3, $4)`,
    endRow: `UPDATE ${attempts} SET ended_at = $3, outcome = $4, status = $5, detail = $6, delay_ms = $7 WHERE key = $1 AND attempt = $2`,
    reschedule: `UPDATE ${intents} SET next_attempt_at = $3, previous_delay_ms = $4, saw_unknown = $5, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE key = $1 AND lease_token = $2`,
    finish: `UPDATE ${intents} SET state = $3, saw_unknown = $4, stop_reason = $5, final_status = $6, final_body = $7, final_detail = $8, finished_at = $9, open_attempt = 0, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL WHERE key = $1 AND lease_token = $2`,
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
      return (await backend.within(tx)(insertSql, intentValues(intent))).changes === 1;
    },
    async get(key) {
      const row = (await query(sql.get, [key])).rows[0];
      return row === undefined ? undefined : rowToIntent(row);
    },
    attempts: async (key) => (await query(sql.attempts, [key])).rows.map(rowToAttempt),
    async list(filter = {}) {
      const limit = filter.limit ?? 100;
      const result = filter.state === undefined ? await query(sql.listAll, [limit]) : await query(sql.listState, [limit, filter.state]);
      return result.rows.map(rowToIntent);
    },
    async counts() {
      const counts = emptyCounts();
      for (const row of (await query(sql.counts)).rows) counts[String(row['state']) as IntentState] = Number(row['n']);
      return counts;
    },
    async claim(owner, nowMs, leaseMs, limit, onlyKey) {
      const token = `${owner}#${nowMs}#${(claims += 1)}`;
      const params = [owner, token, nowMs + leaseMs, nowMs, limit];
      const { rows } = onlyKey === undefined ? await query(sql.claim, params) : await query(sql.claimOne, [...params, onlyKey]);
      return rows
        .map((row) => ({ intent: rowToIntent(row), token, interrupted: Number(row['open_attempt']) === 1 }))
        .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt);
    },
    async startAttempts(starts) {
      if (starts.length === 0) return [];
      await ready();
      return backend.transaction(async (q) => {
        const results: boolean[] = [];
        for (const s of starts) {
          const ok = (await q(sql.start, [s.key, s.token, s.attempt])).changes === 1;
          if (ok) await q(sql.startRow, [s.key, s.attempt, s.worker, s.startedAt]);
          results.push(ok);
        }
        return results;
      });
    },
    async settle(settlements) {
      if (settlements.length === 0) return [];
      await ready();
      return backend.transaction(async (q) => {
        const results: boolean[] = [];
        for (const s of settlements) {
          const { next } = s;
          const changed =
            next.state === 'pending'
              ? await q(sql.reschedule, [s.key, s.token, next.nextAttemptAt, next.previousDelayMs, next.sawUnknown ? 1 : 0])
              : await q(sql.finish, [
                  s.key,
                  s.token,
                  next.state,
                  next.sawUnknown ? 1 : 0,
                  next.final.stopReason,
                  next.final.status,
                  next.final.body === null ? null : toBuffer(next.final.body),
                  next.final.detail,
                  next.final.finishedAt,
                ]);
          const ok = changed.changes === 1;
          if (ok && s.attempt) {
            const a = s.attempt;
            await q(sql.endRow, [s.key, a.attempt, a.endedAt, a.outcome, a.status, a.detail, a.delayMs]);
          }
          results.push(ok);
        }
        return results;
      });
    },
    cancel: async (key, final, nowMs) => (await query(sql.cancel, [key, final.stopReason, final.detail, nowMs])).changes === 1,
    async reopen(key, reopening) {
      const current = await this.get(key);
      if (!current) return false;
      const policy = JSON.stringify({ ...current.policy, maxAttempts: reopening.maxAttempts });
      return (await query(sql.reopen, [key, policy, reopening.deadlineAt, reopening.nextAttemptAt])).changes === 1;
    },
    async nextDueAt() {
      const at = (await query(sql.nextDue)).rows[0]?.['at'];
      return at === null || at === undefined ? undefined : Number(at);
    },
    close: () => backend.close(),
  };
}

let claims = 0;
