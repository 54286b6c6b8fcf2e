/**
 * The dropbox story's course dropbox as a service on the ledger (docs/origins.md): `POST /submissions {student, assignment}`
 * under an Idempotency-Key writes one row with its receipt; an exact retry replays the receipt;
 * a close time refuses new submissions but not replays; `swallow-first-ack` commits and then
 * drops the connection, the lost ack of the seed.
 *
 * ```ts
 * const store = createSqliteStore({ database: () => openSqliteDatabase('oncely-data/oncely.db') });
 * const db = sqliteServiceDatabase(store);
 * await setUpDropbox(db);
 * app.route('/dropbox', createDropboxApp({ ledger: createLedger({ store }), db, scopeOf }));
 * ```
 */
export { createDropboxApp } from './dropbox-app.js';
export {
  DROPBOX_FAULTS,
  FAULT_HEADER,
  FAULT_HEADER_VALUES,
  DEFAULT_DROPBOX_LIMITS,
  resolveDropboxDeps,
  type DropboxAppDeps,
  type DropboxFault,
  type DropboxLimits,
  type ResolvedDropboxDeps,
} from './dropbox-options.js';
export {
  setUpDropbox,
  insertSubmission,
  listSubmissions,
  listSubmissionsPage,
  DROPBOX_TABLE,
  SUBMISSION_STATUSES,
  type SubmissionRow,
  type SubmissionStatus,
} from './dropbox-table.js';
export {
  checkSubmission,
  submissionValidator,
  isJsonMediaType,
  submissionFingerprint,
  SUBMISSION_FIELDS,
  type Submission,
  type SubmissionCheck,
} from './submission.js';
export { DROPBOX_PROBLEMS } from './dropbox-problems.js';
