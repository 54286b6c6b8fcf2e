/**
 * The notes story's versioned notes on the ledger (docs/origins.md): an edit `{expectedVersion, title}` under a request ID
 * (the Idempotency-Key). An exact retry returns the first receipt; the same ID with another
 * command is a request-ID conflict (422); a new ID with a stale version is a version conflict
 * (409); and a receipt is not today's state (GET reads that).
 *
 * ```ts
 * const store = createSqliteStore({ database: () => openSqliteDatabase('oncely-data/app.db') });
 * const db = sqliteServiceDatabase(store);
 * await setUpNotes(db);
 * app.route('/notes', createNotesApp({ ledger: createLedger({ store }), db, scopeOf }));
 * ```
 */
export { createNotesApp, noteJson, type NotesAppDeps } from './notes-app.js';
export {
  setUpNotes,
  readNote,
  editNote,
  NOTES_TABLE,
  SEED_NOTES,
  type Note,
  type EditOutcome,
  type SetUpNotesOptions,
} from './notes-table.js';
export {
  checkNoteCommand,
  NOTE_LIMITS,
  NOTE_COMMAND_FIELDS,
  type NoteCommand,
  type CommandCheck,
} from './note-command.js';
export { noteCommandValidator, noteFingerprint, isJsonMediaType } from './note-request.js';
export { NOTES_PROBLEMS } from './notes-problems.js';
