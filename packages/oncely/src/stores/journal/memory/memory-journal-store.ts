import type { AttemptEntry, ClaimedIntent, IntentRecord } from '../../../journal/intent.js';
import { emptyCounts } from '../../../journal/intent.js';
import { matchesFilter } from '../../../journal/intent-filter.js';
import type { BatchReopening, IntentFilter, JournalStore } from '../../../journal/journal-store.js';
import { StoreClosedError } from '../../store-errors.js';
import { inProcessWake, withWake, type UnwatchedJournalStore } from '../journal-wake.js';
import { backlogOf, cancelRow, wakeParked, type Row } from './memory-intent-rows.js';
import { createMemoryEndpointStore } from './memory-endpoint-store.js';

/**
 * The journal in memory: for tests and one-process demos. It survives nothing, so it is not a
 * journal in the dropbox story's sense (docs/origins.md) ("you need a disk"); use SQLite or PostgreSQL for real work.
 * `recordWithin` has no transaction to join and records at once.
 */
export function createMemoryJournalStore(): JournalStore<unknown> {
  const rows = new Map<string, Row>();
  const attempts = new Map<string, AttemptEntry[]>();
  let seq = 0;
  let tokens = 0;
  let closed = false;
  const open = (): void => {
    if (closed) throw new StoreClosedError('memory');
  };
  const holds = (row: Row | undefined, token: string): row is Row =>
    row !== undefined && row.leaseToken === token;

  const store: UnwatchedJournalStore<unknown> = {
    name: 'memory',
    capabilities: { claimStarting: undefined },
    endpoints: createMemoryEndpointStore(open, {
      wake: (id, nowMs) => wakeParked(rows, id, nowMs),
      cancelPending: (id, final, nowMs) =>
        [...rows.values()].filter(
          (row) => row.intent.endpoint === id && cancelRow(row, final, nowMs),
        ).length,
    }),
    ready: async () => open(),
    async record(intent) {
      open();
      if (rows.has(intent.key)) return false;
      rows.set(intent.key, newRow(intent, ++seq));
      attempts.set(intent.key, []);
      return true;
    },
    recordWithin: (_tx, intent) => store.record(intent),
    get: async (key) => (open(), rows.get(key)?.intent),
    attempts: async (key) => (open(), [...(attempts.get(key) ?? [])]),
    list: async (filter = {}) => (open(), listRows(rows, filter)),
    backlog: async () => (open(), backlogOf(rows)),
    async counts() {
      open();
      const counts = emptyCounts();
      for (const row of rows.values()) counts[row.intent.state] += 1;
      return counts;
    },
    async claim(owner, nowMs, leaseMs, limit, onlyKey) {
      open();
      const due = dueRows(rows, nowMs, limit, onlyKey);
      const token = `${owner}#${++tokens}`;
      return due.map((row): ClaimedIntent => {
        row.leaseOwner = owner;
        row.leaseToken = token;
        row.leaseExpiresAt = nowMs + leaseMs;
        return { intent: row.intent, token, interrupted: row.openAttempt };
      });
    },
    async startAttempts(starts) {
      open();
      return starts.map((start) => {
        const row = rows.get(start.key);
        if (!holds(row, start.token) || row.openAttempt) return false;
        startRow(row, start, attempts.get(start.key)!);
        return true;
      });
    },
    async settle(settlements) {
      open();
      return settlements.map((settlement) => {
        const row = rows.get(settlement.key);
        if (!holds(row, settlement.token)) return false;
        settleRow(row, settlement, attempts.get(settlement.key)!);
        return true;
      });
    },
    async cancel(key, final, nowMs) {
      open();
      const row = rows.get(key);
      return row !== undefined && cancelRow(row, final, nowMs);
    },
    async reopen(key, reopening) {
      open();
      const row = rows.get(key);
      if (!row || row.intent.state === 'pending' || row.intent.state === 'delivered') return false;
      row.intent = reopened(row.intent, reopening);
      // The back of its ordering key's queue, as on SQL (journal-ordering.ts).
      if (row.intent.orderingKey !== null) row.seq = ++seq;
      return true;
    },
    reopenMany: async (reopenings) => {
      open();
      return reopenings.map((r) => {
        const row = rows.get(r.key);
        if (!reopenRow(row, r)) return false;
        if (row!.intent.orderingKey !== null) row!.seq = ++seq; // the back of its key's queue
        return true;
      });
    },
    nextDueAt: async () => (open(), earliestDue(rows)),
    close: async () => void (closed = true),
  };
  // recordWithin records at once here: it wakes as a record does.
  return withWake(store, inProcessWake(), { withinCommits: true });
}

type Start = Parameters<JournalStore<unknown>['startAttempts']>[0][number];
type Settlement = Parameters<JournalStore<unknown>['settle']>[0][number];

/** A recorded intent's row: pending, due at once, no lease. */
function newRow(intent: Parameters<JournalStore<unknown>['record']>[0], seq: number): Row {
  const record: IntentRecord = {
    ...intent,
    body: intent.body.slice(),
    state: 'pending',
    attemptCount: 0,
    nextAttemptAt: intent.createdAt,
    previousDelayMs: 0,
    endpoint: intent.endpoint ?? null,
    sawUnknown: false,
    outcome: null,
  };
  return {
    intent: record,
    leaseOwner: null,
    leaseToken: null,
    leaseExpiresAt: null,
    openAttempt: false,
    seq,
  };
}

/** An attempt starts: the row holds it open, and its entry is added. */
function startRow(row: Row, start: Start, list: AttemptEntry[]): void {
  row.openAttempt = true;
  row.intent = { ...row.intent, attemptCount: start.attempt };
  list.push({
    key: start.key,
    attempt: start.attempt,
    worker: start.worker,
    startedAt: start.startedAt,
    endedAt: null,
    outcome: null,
    status: null,
    detail: null,
    delayMs: null,
    durationMs: null,
    response: null,
  });
}

/** A settlement: the attempt's end, then the intent's next state; the lease is released. */
function settleRow(row: Row, settlement: Settlement, list: AttemptEntry[]): void {
  const ended = settlement.attempt;
  if (ended) {
    const index = list.findIndex((a) => a.attempt === ended.attempt);
    if (index >= 0)
      list[index] = {
        ...list[index]!,
        ...ended,
        durationMs: ended.durationMs ?? null,
        response: ended.response ?? null,
      };
  }
  const { next } = settlement;
  row.intent =
    next.state === 'pending'
      ? {
          ...row.intent,
          nextAttemptAt: next.nextAttemptAt,
          previousDelayMs: next.previousDelayMs,
          sawUnknown: next.sawUnknown,
        }
      : {
          ...row.intent,
          state: next.state,
          sawUnknown: next.sawUnknown,
          outcome: next.final,
        };
  row.leaseOwner = row.leaseToken = row.leaseExpiresAt = null;
  row.openAttempt = false;
}

/** The pending rows due at `nowMs` whose lease is free, oldest due first, at most `limit`. */
function dueRows(
  rows: Map<string, Row>,
  nowMs: number,
  limit: number,
  onlyKey: string | undefined,
): Row[] {
  const hasTurn = turns(rows);
  return [...rows.values()]
    .filter(
      (row) =>
        (onlyKey === undefined || row.intent.key === onlyKey) &&
        row.intent.state === 'pending' &&
        row.intent.nextAttemptAt <= nowMs &&
        (row.leaseExpiresAt === null || row.leaseExpiresAt <= nowMs) &&
        hasTurn(row),
    )
    .sort((a, b) => a.intent.nextAttemptAt - b.intent.nextAttemptAt || a.seq - b.seq)
    .slice(0, limit);
}

/**
 * FIFO per ordering key: a row's turn has come when no intent of its ordering key recorded
 * before it is pending, i.e. it is the pending head of its key (one pass over the rows).
 */
function turns(rows: Map<string, Row>): (row: Row) => boolean {
  const heads = new Map<string, number>();
  for (const { intent, seq } of rows.values())
    if (intent.orderingKey !== null && intent.state === 'pending')
      heads.set(intent.orderingKey, Math.min(seq, heads.get(intent.orderingKey) ?? seq));
  return (row) => row.intent.orderingKey === null || heads.get(row.intent.orderingKey) === row.seq;
}

/** When the next pending intent is due (or its lease ends), if any is pending. */
function earliestDue(rows: Map<string, Row>): number | undefined {
  let earliest: number | undefined;
  const hasTurn = turns(rows);
  for (const row of rows.values()) {
    if (row.intent.state !== 'pending' || !hasTurn(row)) continue;
    const at = Math.max(row.intent.nextAttemptAt, row.leaseExpiresAt ?? 0);
    if (earliest === undefined || at < earliest) earliest = at;
  }
  return earliest;
}

/** A finished intent pending again, with a new budget and deadline. */
function reopened(
  intent: IntentRecord,
  reopening: Parameters<JournalStore<unknown>['reopen']>[1],
): IntentRecord {
  return {
    ...intent,
    state: 'pending',
    outcome: null,
    policy: { ...intent.policy, maxAttempts: reopening.maxAttempts },
    deadlineAt: reopening.deadlineAt,
    nextAttemptAt: reopening.nextAttemptAt,
    previousDelayMs: 0,
  };
}

/** A listing: the rows the filter passes, newest first, after the `after` key's row, at most `limit`. */
function listRows(rows: Map<string, Row>, filter: IntentFilter): IntentRecord[] {
  // Paging by key: a key not in the journal has nothing after it (as on SQL).
  const after = filter.after === undefined ? Infinity : (rows.get(filter.after)?.seq ?? 0);
  return [...rows.values()]
    .filter((row) => row.seq < after && matchesFilter(row.intent, filter))
    .sort((a, b) => b.seq - a.seq)
    .slice(0, filter.limit ?? 100)
    .map((row) => row.intent);
}

/** One intent of a batch reopening: only while finished (not delivered) at the attempts it was read with. */
function reopenRow(row: Row | undefined, r: BatchReopening): boolean {
  const state = row?.intent.state;
  if (!row || state === 'pending' || state === 'delivered') return false;
  if (row.intent.attemptCount !== r.attemptCount) return false;
  const { policy, deadlineAt, nextAttemptAt } = r;
  row.intent = {
    ...reopened(row.intent, { maxAttempts: policy.maxAttempts, deadlineAt, nextAttemptAt }),
    policy,
  };
  return true;
}

/** The endpoint's parked intents due at `nowMs`: `resume` wakes them. */
