import { columnTypes, type ServiceDatabase } from '../sql/service-database.js';
import { setUpTables } from '../sql/set-up-tables.js';
import type { SqlHandle } from 'oncely';
import type { Submission } from './submission.js';

/** The dropbox's table, beside the ledger's in the same database. */
export const DROPBOX_TABLE = 'oncely_dropbox_submissions';

/** The dropbox story's (docs/origins.md) `Status`: a row the dropbox holds is accepted (refusals are receipts, not rows). */
export const SUBMISSION_STATUSES = ['accepted'] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

/** One row of the dump: the dropbox story's (docs/origins.md) `Receipt` dataclass, field for field. */
export interface SubmissionRow {
  readonly key: string;
  readonly student: string;
  readonly assignment: string;
  readonly status: SubmissionStatus;
  /** How many times the effect ran for this key. The ledger keeps it at 1; 2 would be fixture A's bug. */
  readonly writes: number;
}

/** Creates the table if missing. Run once at start, before the first request. */
export async function setUpDropbox<Tx>(db: ServiceDatabase<Tx>): Promise<void> {
  const { instant } = columnTypes(db.dialect);
  await setUpTables(db, DROPBOX_TABLE, async (sql) => {
    await sql.run(`CREATE TABLE IF NOT EXISTS ${DROPBOX_TABLE} (
      scope TEXT NOT NULL,
      key TEXT NOT NULL,
      student TEXT NOT NULL,
      assignment TEXT NOT NULL,
      status TEXT NOT NULL,
      writes INTEGER NOT NULL,
      submitted_at ${instant} NOT NULL,
      PRIMARY KEY (scope, key)
    )`);
  });
}

/**
 * The effect of one submission, inside the ledger's transaction. A second run for the same key
 * (which the ledger prevents) would not hide as a new row or a failed insert: it counts in
 * `writes`, which the dump shows, as the dropbox story's fixture A would (docs/origins.md).
 */
export async function insertSubmission(
  sql: SqlHandle,
  scope: string,
  key: string,
  submission: Submission,
  nowMs: number,
): Promise<SubmissionRow> {
  const rows = await sql.all<{ writes: number | string }>(
    `INSERT INTO ${DROPBOX_TABLE} (scope, key, student, assignment, status, writes, submitted_at)
     VALUES ($1, $2, $3, $4, 'accepted', 1, $5)
     ON CONFLICT (scope, key) DO UPDATE SET writes = ${DROPBOX_TABLE}.writes + 1
     RETURNING writes`,
    [scope, key, submission.student, submission.assignment, nowMs],
  );
  return { key, ...submission, status: 'accepted', writes: Number(rows[0]?.writes ?? 1) };
}

/** The caller's rows, oldest first: what `GET /dropbox/store` dumps. */
export async function listSubmissions(sql: SqlHandle, scope: string): Promise<SubmissionRow[]> {
  const rows = await sql.all<{
    key: string;
    student: string;
    assignment: string;
    status: string;
    writes: number | string;
  }>(
    `SELECT key, student, assignment, status, writes FROM ${DROPBOX_TABLE} WHERE scope = $1 ORDER BY submitted_at, key`,
    [scope],
  );
  return rows.map((r) => ({
    key: r.key,
    student: r.student,
    assignment: r.assignment,
    status: r.status as SubmissionStatus,
    writes: Number(r.writes),
  }));
}

/**
 * The caller's newest `limit` rows, listed oldest first like {@link listSubmissions}, and how many
 * rows the caller has in all. One statement, so the total and the rows are of one snapshot.
 */
export async function listSubmissionsPage(
  sql: SqlHandle,
  scope: string,
  limit: number,
): Promise<{ rows: SubmissionRow[]; total: number }> {
  const rows = await sql.all<{
    key: string;
    student: string;
    assignment: string;
    status: string;
    writes: number | string;
    total: number | string;
  }>(
    `SELECT key, student, assignment, status, writes, total FROM (
       SELECT key, student, assignment, status, writes, submitted_at, COUNT(*) OVER () AS total FROM ${DROPBOX_TABLE}
       WHERE scope = $1 ORDER BY submitted_at DESC, key DESC LIMIT $2
     ) AS newest ORDER BY submitted_at, key`,
    [scope, limit],
  );
  return {
    rows: rows.map((r) => ({
      key: r.key,
      student: r.student,
      assignment: r.assignment,
      status: r.status as SubmissionStatus,
      writes: Number(r.writes),
    })),
    // The window counts before LIMIT; no row sent means the caller has none (limit is at least 1).
    total: Number(rows[0]?.total ?? 0),
  };
}
