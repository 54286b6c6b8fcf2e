import type {
  AttemptEntry,
  FinalRecord,
  IntentRecord,
  IntentState,
  NewIntent,
} from '../../../journal/intent.js';
import type { Outcome } from '../../../contract/status-class.js';
import type { StopReason } from '../../../policy/decide.js';
import { orderingDdl } from './journal-ordering.js';
import { policyFromJson } from '../../../journal/outbox-policy.js';
import { attemptLogDdl, attemptLogOf } from './attempt-log-columns.js';
import { openAttemptDdl } from './open-attempt.js';
import { createTextMemo, frozenJson } from '../../../journal/text-memo.js';

/**
 * The journal's two tables, shared by the SQL stores. Instants are integer ms on the worker's
 * clock (never the database's now()), so an injected clock drives leases and deadlines alike.
 * Booleans are 0/1 integers, so one set of statements serves SQLite and PostgreSQL.
 */
export const INTENT_INSERT_COLUMNS = [
  'key',
  'target',
  'method',
  'headers',
  'secret_headers',
  'body',
  'policy',
  'deadline_at',
  'created_by',
  'created_at',
  'state',
  'attempt_count',
  'next_attempt_at',
  'previous_delay_ms',
  'saw_unknown',
  'open_attempt',
  'ordering_key',
  'endpoint',
] as const;

/**
 * What a claim reads back of each intent it leases: what rowToIntent reads of a pending intent,
 * which is what recording wrote of it (its outcome is read only once it is finished; whether an
 * attempt was open each claim reads its own way). Not `*`: the lease, the open attempt's worker
 * and start, and the final columns would travel with every claimed row.
 */
export const CLAIMED_COLUMNS: readonly string[] = INTENT_INSERT_COLUMNS.filter(
  (column) => column !== 'open_attempt',
);

export interface JournalColumnTypes {
  readonly bigint: string;
  readonly bytes: string;
  readonly serial: string;
  /** How ready() adds a column to a table made by an earlier oncely: 'ADD COLUMN IF NOT EXISTS'
   * (PostgreSQL), or 'ADD COLUMN' (SQLite, whose setup passes over "duplicate column name"). */
  readonly addColumn: string;
}

/**
 * The claim's index is the claim's order, (next_attempt_at, seq), over pending rows only: a claim
 * of N reads N entries from where it starts (claim-mark.ts), never sorts the whole queue. The
 * index of next_attempt_at alone that earlier versions made goes.
 */
export function journalDdl(intents: string, attempts: string, types: JournalColumnTypes): string {
  const { bigint, bytes, serial, addColumn } = types;
  return `CREATE TABLE IF NOT EXISTS ${intents} (
    seq ${serial},
    key TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL,
    method TEXT NOT NULL,
    headers TEXT NOT NULL,
    secret_headers TEXT NOT NULL,
    body ${bytes} NOT NULL,
    policy TEXT NOT NULL,
    deadline_at ${bigint},
    created_by TEXT NOT NULL,
    created_at ${bigint} NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'refused', 'gave_up', 'unknown', 'cancelled')),
    attempt_count INTEGER NOT NULL,
    next_attempt_at ${bigint} NOT NULL,
    previous_delay_ms ${bigint} NOT NULL,
    saw_unknown INTEGER NOT NULL,
    open_attempt INTEGER NOT NULL,
    lease_owner TEXT,
    lease_token TEXT,
    lease_expires_at ${bigint},
    stop_reason TEXT,
    final_status INTEGER,
    final_body ${bytes},
    final_detail TEXT,
    finished_at ${bigint}
  );
  CREATE INDEX IF NOT EXISTS ${indexName(intents, 'due_order')} ON ${intents} (next_attempt_at, seq) WHERE state = 'pending';
  DROP INDEX IF EXISTS ${indexName(intents, 'due', true)};
  CREATE TABLE IF NOT EXISTS ${attempts} (
    key TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    worker TEXT NOT NULL,
    started_at ${bigint} NOT NULL,
    ended_at ${bigint},
    outcome TEXT,
    status INTEGER,
    detail TEXT,
    delay_ms ${bigint},
    PRIMARY KEY (key, attempt)
  );
  ${orderingDdl(intents, indexName(intents, 'ordered'), addColumn)};
  ${attemptLogDdl(attempts, types)};
  ${openAttemptDdl(intents, types)};`;
}

/**
 * An index name derived from a possibly schema-qualified, quoted table name; `qualified`: in the
 * table's schema (as DROP INDEX names it), else bare (as CREATE INDEX names it).
 */
function indexName(table: string, suffix: string, qualified = false): string {
  const parts = table.split('.');
  const bare = `"${parts.pop()!.replaceAll('"', '')}_${suffix}"`;
  return qualified && parts.length > 0 ? `${parts.join('.')}.${bare}` : bare;
}

export function intentValues(intent: NewIntent): unknown[] {
  return [
    intent.key,
    intent.target,
    intent.method,
    JSON.stringify(intent.headers),
    JSON.stringify(intent.secretHeaders),
    toBuffer(intent.body),
    JSON.stringify(intent.policy),
    intent.deadlineAt,
    intent.createdBy,
    intent.createdAt,
    'pending',
    0,
    intent.createdAt,
    0,
    0,
    0,
    intent.orderingKey,
    intent.endpoint ?? null,
  ];
}

export function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Bytes as hex text, for a JSON batch row (the statement unhexes it); no copy, '' for none. */
export function hexOf(bytes: Uint8Array): string {
  return bytes.byteLength === 0 ? '' : toBuffer(bytes).toString('hex');
}

const nullableNumber = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
const nullableString = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

const headersOf = createTextMemo(frozenJson<Readonly<Record<string, string>>>);
const secretHeadersOf = createTextMemo(frozenJson<readonly string[]>);

/**
 * Bytes a driver returned (a Buffer) as a plain Uint8Array over the same memory: the driver made
 * them for this row alone, so they need no copy.
 */
const bytesOf = (value: unknown): Uint8Array => {
  const bytes = value as Uint8Array;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

/**
 * Reads a row back (pg returns int8 as strings, both drivers return bytes as Buffers). Rows with
 * the same headers, secret headers or policy text share one frozen object of each.
 */
export function rowToIntent(row: Record<string, unknown>): IntentRecord {
  const state = String(row['state']) as IntentState;
  const outcome: FinalRecord | null =
    state === 'pending'
      ? null
      : {
          stopReason: String(row['stop_reason']) as StopReason | 'cancelled',
          status: nullableNumber(row['final_status']),
          body: row['final_body'] == null ? null : bytesOf(row['final_body']),
          detail: nullableString(row['final_detail']),
          finishedAt: Number(row['finished_at']),
        };
  return {
    key: String(row['key']),
    target: String(row['target']),
    method: String(row['method']),
    headers: headersOf(String(row['headers'])),
    secretHeaders: secretHeadersOf(String(row['secret_headers'])),
    body: bytesOf(row['body']),
    policy: policyFromJson(String(row['policy'])),
    deadlineAt: nullableNumber(row['deadline_at']),
    createdBy: String(row['created_by']),
    createdAt: Number(row['created_at']),
    state,
    attemptCount: Number(row['attempt_count']),
    nextAttemptAt: Number(row['next_attempt_at']),
    previousDelayMs: Number(row['previous_delay_ms']),
    sawUnknown: Number(row['saw_unknown']) === 1,
    orderingKey: nullableString(row['ordering_key']),
    outcome,
    endpoint: nullableString(row['endpoint']),
  };
}

export function rowToAttempt(row: Record<string, unknown>): AttemptEntry {
  return {
    key: String(row['key']),
    attempt: Number(row['attempt']),
    worker: String(row['worker']),
    startedAt: Number(row['started_at']),
    endedAt: nullableNumber(row['ended_at']),
    outcome: nullableString(row['outcome']) as Outcome | null,
    status: nullableNumber(row['status']),
    detail: nullableString(row['detail']),
    delayMs: nullableNumber(row['delay_ms']),
    ...attemptLogOf(row),
  };
}
