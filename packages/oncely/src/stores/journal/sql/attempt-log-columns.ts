import type { AttemptResponse } from '../../../journal/attempt-response.js';
import { hexOf, type JournalColumnTypes } from './journal-row.js';

/**
 * The attempt log's columns on the attempts table (docs/outbox.md, "Attempt log"): how long the
 * request took, and the response's headers (JSON) and first bytes. Added by ready() to a table
 * an earlier oncely made, like `ordering_key` (journal-ordering.ts): additive, its earlier
 * attempts read back with no response and no duration.
 */
export function attemptLogDdl(attempts: string, types: JournalColumnTypes): string {
  const clauses = [
    `duration_ms ${types.bigint}`,
    'response_headers TEXT',
    `response_body ${types.bytes}`,
    'response_truncated INTEGER',
  ].map((column) => `${types.addColumn} ${column}`);
  // PostgreSQL (IF NOT EXISTS) takes the table's lock once for one ALTER of every clause, so a
  // worker opening the journal holds the others up once; SQLite adds one column a statement.
  return types.addColumn.endsWith('IF NOT EXISTS')
    ? `ALTER TABLE ${attempts} ${clauses.join(', ')}`
    : clauses.map((clause) => `ALTER TABLE ${attempts} ${clause}`).join(';\n  ');
}

/** The attempt log's part of an attempt's end, as the settle statement's JSON rows carry it. */
export function attemptLogValues(
  durationMs: number | null | undefined,
  response: AttemptResponse | null | undefined,
) {
  return {
    duration_ms: durationMs ?? null,
    response_headers: response ? JSON.stringify(response.headers) : null,
    response_body: response ? hexOf(response.body) : null,
    response_truncated: response ? (response.truncated ? 1 : 0) : null,
  };
}

/** The attempt log's part of an attempt row read back (null on rows of an earlier oncely). */
export function attemptLogOf(row: Record<string, unknown>): {
  durationMs: number | null;
  response: AttemptResponse | null;
} {
  const duration = row['duration_ms'];
  const headers = row['response_headers'];
  return {
    durationMs: duration === null || duration === undefined ? null : Number(duration),
    response:
      headers === null || headers === undefined
        ? null
        : {
            headers: JSON.parse(String(headers)) as Record<string, string>,
            body: new Uint8Array((row['response_body'] as Uint8Array | null) ?? new Uint8Array(0)),
            truncated: Number(row['response_truncated']) === 1,
          },
  };
}
