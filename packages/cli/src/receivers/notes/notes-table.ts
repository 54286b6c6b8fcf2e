import { systemClock, type Clock, type SqlHandle } from 'oncely';
import { columnTypes, type ServiceDatabase } from '../sql/service-database.js';
import { setUpTables } from '../sql/set-up-tables.js';
import type { NoteCommand } from './note-command.js';

/** The notes' table, beside the ledger's in the same database so an edit joins its transaction. */
export const NOTES_TABLE = 'oncely_notes';

/** A note as stored. `updatedAt` is ms since the epoch, on the service's clock. */
export interface Note {
  readonly id: string;
  readonly version: number;
  readonly title: string;
  readonly updatedAt: number;
}

/** The disposable synthetic notes every fresh database starts with (docs/origins.md, "The notes' retry contract": "each run starts with disposable synthetic notes"). */
export const SEED_NOTES = [
  { id: 'note-1', title: 'Agenda for Monday' },
  { id: 'note-2', title: 'Reading list' },
  { id: 'note-3', title: 'Release checklist' },
] as const;

export interface SetUpNotesOptions {
  /** Stamps the seeded notes' updatedAt. @default systemClock */
  readonly clock?: Clock;
}

/**
 * Creates the notes table if missing and seeds note-1..note-3 at version 1 where they are
 * missing; notes that exist (edited or not) are left alone, so a restart keeps the edits.
 */
export async function setUpNotes(
  db: ServiceDatabase<unknown>,
  options: SetUpNotesOptions = {},
): Promise<void> {
  const clock = options.clock ?? systemClock;
  const { instant } = columnTypes(db.dialect);
  await setUpTables(db, NOTES_TABLE, async (sql) => {
    await sql.run(`CREATE TABLE IF NOT EXISTS ${NOTES_TABLE} (
      id TEXT PRIMARY KEY,
      version INTEGER NOT NULL CHECK (version >= 1),
      title TEXT NOT NULL,
      updated_at ${instant} NOT NULL
    )`);
    const nowMs = clock.now();
    for (const note of SEED_NOTES) {
      await sql.run(
        `INSERT INTO ${NOTES_TABLE} (id, version, title, updated_at) VALUES ($1, 1, $2, $3) ON CONFLICT (id) DO NOTHING`,
        [note.id, note.title, nowMs],
      );
    }
  });
}

interface NoteRow {
  readonly id: string;
  readonly version: number | string;
  readonly title: string;
  readonly updated_at: number | string; // pg returns BIGINT as a string
}

const toNote = (row: NoteRow): Note => ({
  id: row.id,
  version: Number(row.version),
  title: row.title,
  updatedAt: Number(row.updated_at),
});

export async function readNote(sql: SqlHandle, id: string): Promise<Note | undefined> {
  const [row] = await sql.all<NoteRow>(
    `SELECT id, version, title, updated_at FROM ${NOTES_TABLE} WHERE id = $1`,
    [id],
  );
  return row === undefined ? undefined : toNote(row);
}

/** What an edit did, as data: the handler turns it into the answer (and the receipt). */
export type EditOutcome =
  | { readonly kind: 'edited'; readonly note: Note }
  | { readonly kind: 'version_conflict'; readonly currentVersion: number }
  | { readonly kind: 'not_found' };

/**
 * The notes story's effect (docs/origins.md): check the expected version, apply the edit, bump the version. One
 * conditional UPDATE, so two edits racing from the same version cannot both win: on PostgreSQL
 * the second waits for the first's row lock, re-reads the row and matches nothing.
 */
export async function editNote(
  sql: SqlHandle,
  id: string,
  command: NoteCommand,
  nowMs: number,
): Promise<EditOutcome> {
  const [row] = await sql.all<NoteRow>(
    `UPDATE ${NOTES_TABLE} SET title = $1, version = version + 1, updated_at = $2 WHERE id = $3 AND version = $4 RETURNING id, version, title, updated_at`,
    [command.title, nowMs, id, command.expectedVersion],
  );
  if (row !== undefined) return { kind: 'edited', note: toNote(row) };
  const current = await readNote(sql, id);
  return current === undefined
    ? { kind: 'not_found' }
    : { kind: 'version_conflict', currentVersion: current.version };
}
