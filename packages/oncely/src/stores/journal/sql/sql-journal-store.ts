import { emptyCounts, type IntentState } from '../../../journal/intent.js';
import type { JournalStore } from '../../../journal/journal-store.js';
import { sqlHandleOf, type CarriesSqlHandle, type SqlHandle } from '../../../ledger/sql-handle.js';
import { listStatement } from './sql-journal-list.js';
import { journalStatements } from './sql-journal-statements.js';
import { hexOf, intentValues, rowToAttempt, rowToIntent } from './journal-row.js';
import { createSqlEndpointStore } from './sql-endpoint-store.js';
import { withWake, type JournalWake, type UnwatchedJournalStore } from '../journal-wake.js';
import { orderedWrite, reopenBatch, reopenOne } from './sql-journal-reopen.js';
import { attemptLogValues } from './attempt-log-columns.js';
import { claimStartCapability } from './sql-journal-claim-start.js';
import { createClaimMark } from './claim-mark.js';
import { nextDueAt } from './next-due.js';

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
  readonly endpoints: string;
  /** DDL, run once by ready(). */
  readonly ddl: string;
  /** Appended to the claim's SELECT: ' FOR UPDATE SKIP LOCKED' on PostgreSQL; SQLite's BEGIN IMMEDIATE already excludes. */
  readonly lockClause: string;
  /** Appended to an endpoint row's SELECT in an update: ' FOR UPDATE' on PostgreSQL, '' on SQLite. */
  readonly rowLockClause: string;
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
  /**
   * Taken before an intent with an ordering key is recorded or reopened ($1: that key): on
   * PostgreSQL a transaction lock, so one key's intents commit in `seq` order; absent on SQLite,
   * whose single writer already does (journal-ordering.ts).
   */
  readonly orderingLock?: string;
  /** Batch rows find theirs by a LATERAL lookup joined on ctid (PostgreSQL; sql-journal-statements.ts). */
  readonly lateralLookup?: boolean;
  /** A `seq` above every other: where a reopened intent with an ordering key goes. */
  readonly nextSeq: string;
  /** RETURNING the updated row's key in an UPDATE … FROM (SQLite allows only the target's own, unqualified columns). */
  readonly returningKey: string;
  /** Bytes from a hex text column of such a relation. */
  fromHex(expression: string): string;
  setup(ddl: string): Promise<void>;
  query: JournalQuery;
  transaction<T>(fn: (query: JournalQuery) => Promise<T>): Promise<T>;
  within(tx: Tx): JournalQuery;
  close(): Promise<void>;
  /** How workers hear of an intent that may be due (journal-wake.ts). */
  readonly wake: JournalWake;
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
): JournalStore<Tx | SqlHandle | CarriesSqlHandle> {
  return withWake(sqlJournalStore(backend), backend.wake);
}

/** The store's statements; `withWake` adds the wake-ups. */
function sqlJournalStore<Tx>(
  backend: JournalSqlBackend<Tx>,
): UnwatchedJournalStore<Tx | SqlHandle | CarriesSqlHandle> {
  let readied: Promise<void> | undefined;
  const ready = (): Promise<void> =>
    (readied ??= backend.setup(backend.ddl).catch((error: unknown) => {
      readied = undefined;
      throw error;
    }));
  const sql = journalStatements(backend);
  const recordSql = backend.wake.recordStatement(sql.insert);
  const query: JournalQuery = async (text, params) => {
    await ready();
    return backend.query(text, params);
  };
  // Where claims start, and the next-due reading (next-due.ts): on PostgreSQL only, whose claim
  // is one statement that reads from the mark (claim-mark.ts); SQLite's reads none.
  const mark = createClaimMark();
  const markedReads = backend.writableCte ? mark : undefined;
  if (markedReads) backend.wake.hearWith?.(mark);

  return {
    name: backend.name,
    capabilities: {
      claimStarting: claimStartCapability(backend, query, ready, leaseToken, mark),
    },
    endpoints: createSqlEndpointStore(backend, query, ready),
    ready,
    record: async (intent) =>
      (await orderedWrite(backend, ready, intent.orderingKey, recordSql, intentValues(intent))) ===
      1,
    recordWithin: async (tx, intent) => {
      await ready();
      // The ledger's dialect-neutral handle (context.sql): the intent commits with the receipt.
      // …or the route's ORM transaction, which carries that handle (oncely/orm).
      const handle = isSqlHandle(tx) ? tx : sqlHandleOf(tx);
      const within = handle !== undefined ? handleQuery(handle) : backend.within(tx as Tx);
      if (intent.orderingKey !== null && backend.orderingLock !== undefined)
        await within(backend.orderingLock, [intent.orderingKey]);
      return (await within(recordSql, intentValues(intent))).changes === 1;
    },
    async get(key) {
      const row = (await query(sql.get, [key])).rows[0];
      return row === undefined ? undefined : rowToIntent(row);
    },
    attempts: async (key) => (await query(sql.attempts, [key])).rows.map(rowToAttempt),
    async list(filter = {}) {
      const { text, params } = listStatement(backend.intents, filter);
      return (await query(text, params)).rows.map(rowToIntent);
    },
    async backlog() {
      const row = (await query(sql.backlog)).rows[0] ?? {};
      const oldest = row['oldest'];
      return {
        pending: Number(row['n'] ?? 0),
        oldestPendingAt: oldest == null ? null : Number(oldest),
      };
    },
    async counts() {
      const counts = emptyCounts();
      for (const row of (await query(sql.counts)).rows)
        counts[String(row['state']) as IntentState] = Number(row['n']);
      return counts;
    },
    async claim(owner, nowMs, leaseMs, limit, onlyKey) {
      const token = leaseToken(owner, nowMs);
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
    startAttempts: async (starts) => {
      if (starts.length === 0) return [];
      await ready();
      return startIn(backend, sql, starts);
    },
    settle: async (settlements) => {
      if (settlements.length === 0) return [];
      await ready();
      return settleIn(backend, sql, settlements);
    },
    cancel: async (key, final, nowMs) =>
      (await query(sql.cancel, [key, final.stopReason, final.detail, nowMs])).changes === 1,
    reopen(key, reopening) {
      return reopenOne(backend, ready, sql, this.get.bind(this), key, reopening);
    },
    reopenMany(reopenings) {
      return reopenBatch(backend, ready, sql, this.get.bind(this), reopenings);
    },
    nextDueAt: () => nextDueAt(query, sql, markedReads),
    close: () => backend.close(),
  };
}

let claims = 0;
/** A claim's lease token: unique in this process, and names its owner and instant. */
const leaseToken = (owner: string, nowMs: number): string => `${owner}#${nowMs}#${(claims += 1)}`;

function isSqlHandle(tx: unknown): tx is SqlHandle {
  return (
    typeof tx === 'object' &&
    tx !== null &&
    'dialect' in tx &&
    typeof (tx as SqlHandle).run === 'function'
  );
}

type Statements = ReturnType<typeof journalStatements>;

/** The ledger's handle as a JournalQuery (a SELECT answers rows, a write its count). */
function handleQuery(tx: SqlHandle): JournalQuery {
  return async (text, params) =>
    /^\s*SELECT/i.test(text)
      ? { rows: await tx.all(text, params), changes: 0 }
      : { rows: [], changes: (await tx.run(text, params)).rowCount };
}

/**
 * Starts the attempts whose lease is still theirs: true for each that started. One statement on
 * the intent rows: an attempt's own row is written when it ends (open-attempt.ts).
 */
async function startIn<Tx>(
  backend: JournalSqlBackend<Tx>,
  sql: Statements,
  starts: Parameters<JournalStore<Tx>['startAttempts']>[0],
): Promise<boolean[]> {
  const rows = starts.map((x) => ({
    key: x.key,
    token: x.token,
    attempt: x.attempt,
    worker: x.worker,
    started_at: x.startedAt,
  }));
  const started = new Set(
    (await backend.query(sql.start, [JSON.stringify(rows)])).rows.map((row) => String(row['key'])),
  );
  return starts.map((x) => started.has(x.key));
}

/** Settles the intents whose lease is still theirs, with their attempts' ends: true for each. */
async function settleIn<Tx>(
  backend: JournalSqlBackend<Tx>,
  sql: Statements,
  settlements: Parameters<JournalStore<Tx>['settle']>[0],
): Promise<boolean[]> {
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
      final_body: final?.body ? hexOf(final.body) : null,
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
      ...attemptLogValues(a!.durationMs, a!.response),
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
}
