import type { JournalColumnTypes } from './journal-row.js';
import type { JsonColumn } from './sql-journal-store.js';

/**
 * An attempt's row is written once, closed, when it is settled (docs/outbox.md, "What it
 * records"): until then the intent row alone says an attempt is open (`open_attempt`, its number
 * `attempt_count`), written by the claim that started it, in the same row version as the lease.
 * Who started it and when ride on that row too, `attempt_worker` and `attempt_started_at`, so the
 * attempt's row can be written at its end (by its worker, or, interrupted, by the next claimant's)
 * and an open attempt can be listed. A claim of an interrupted intent leaves them: they are the
 * interrupted attempt's. Writing the row at the start and closing it at the end was two row
 * versions an attempt where one does.
 */
export function openAttemptDdl(intents: string, types: JournalColumnTypes): string {
  const clauses = ['attempt_worker TEXT', `attempt_started_at ${types.bigint}`].map(
    (column) => `${types.addColumn} ${column}`,
  );
  // Additive, as the attempt log's columns (attempt-log-columns.ts): an intent an earlier oncely
  // started has its open attempt's row already, and the columns null.
  return types.addColumn.endsWith('IF NOT EXISTS')
    ? `ALTER TABLE ${intents} ${clauses.join(', ')}`
    : clauses.map((clause) => `ALTER TABLE ${intents} ${clause}`).join(';\n  ');
}

/** The attempts table's columns, in the order both branches of the listing give them. */
const ATTEMPT_COLUMNS = [
  'key',
  'attempt',
  'worker',
  'started_at',
  'ended_at',
  'outcome',
  'status',
  'detail',
  'delay_ms',
  'duration_ms',
  'response_headers',
  'response_body',
  'response_truncated',
] as const;

/**
 * An intent's attempts ($1: its key), oldest first: the rows written, and the attempt still
 * without one (open, or left open by a cancel, as a row left open was before), from the intent.
 * An attempt taken back (unstart) lowered the count: its number is past `attempt_count`.
 */
export function attemptsListing(intents: string, attempts: string): string {
  // What the attempt has no row for yet: every column past its start.
  const unwritten = ATTEMPT_COLUMNS.slice(4).map(() => 'NULL');
  const open = `SELECT i.key, i.attempt_count, i.attempt_worker, i.attempt_started_at, ${unwritten.join(', ')} FROM ${intents} AS i WHERE i.key = $1 AND i.attempt_count >= 1 AND i.attempt_started_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${attempts} AS a WHERE a.key = i.key AND a.attempt = i.attempt_count)`;
  return `SELECT ${ATTEMPT_COLUMNS.join(', ')} FROM ${attempts} WHERE key = $1 UNION ALL ${open} ORDER BY attempt`;
}

/**
 * The batch's closed attempts into the attempts table, from `source`: the ends (END_COLUMNS) as
 * `s`, joined to what names the attempt's `worker` and `startedAt` (columns of the intent row). A
 * row that exists (started by an earlier oncely, which wrote it at the start) is closed instead.
 */
export function insertEndedAttempts(
  attempts: string,
  source: { from: string; worker: string; startedAt: string },
  fromHex: (expression: string) => string,
  endColumns: readonly JsonColumn[],
): string {
  const ended = endColumns
    .map((c) => c.name)
    .filter((name) => name !== 'key' && name !== 'attempt');
  const values = ended.map((name) =>
    name === 'response_body' ? fromHex(`s.${name}`) : `s.${name}`,
  );
  // NOT NULL is checked before the conflict is: an earlier oncely's intent has its row (the
  // conflict) and no worker or start on the intent; its row keeps its own.
  return `INSERT INTO ${attempts} (key, attempt, worker, started_at, ${ended.join(', ')}) SELECT s.key, s.attempt, COALESCE(${source.worker}, ''), COALESCE(${source.startedAt}, s.ended_at), ${values.join(', ')} FROM ${source.from} WHERE true ON CONFLICT (key, attempt) DO UPDATE SET ${ended.map((name) => `${name} = excluded.${name}`).join(', ')}`;
}
