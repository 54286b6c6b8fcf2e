import { Hono } from 'hono';
import { InvalidOptionError, type Ledger, type Clock } from 'oncely';
import { methodNotAllowedResponse, unauthenticatedResponse, problemResponse } from 'oncely/http';
import { idempotency, type RouteIdempotency } from 'oncely/hono';
import type { ServiceDatabase } from '../sql/service-database.js';
import { checkReceiverDeps } from '../receiver-deps.js';
import { NOTE_LIMITS, type NoteCommand } from './note-command.js';
import { noteCommandValidator, noteFingerprint } from './note-request.js';
import { NOTES_PROBLEMS } from './notes-problems.js';
import { editNote, readNote, type Note } from './notes-table.js';

export interface NotesAppDeps<Tx> {
  readonly ledger: Ledger<Tx>;
  /** The notes' table lives in the ledger's database, so an edit commits with its receipt. */
  readonly db: ServiceDatabase<Tx>;
  /** The authenticated caller (the bearer token's owner), or undefined: 401. Request IDs are scoped by it. */
  readonly scopeOf: (request: Request) => string | undefined;
  /** Stamps `updatedAt`. @default systemClock */
  readonly clock?: Clock;
  /** Told about failures the client sees only as 500 or 503 (a thrown effect, a ledger outage). @default nothing */
  readonly onError?: (error: unknown, request: Request) => void;
}

type NotesEnv<Tx> = { Variables: { idempotency: RouteIdempotency<Tx, NoteCommand> | undefined } };

/** The methods `/:id` answers; anything else is a 405 naming them. */
const ALLOWED = 'GET, HEAD, PATCH';

/** A note as the API shows it: the instant as RFC 3339 text. */
export function noteJson(note: Note): {
  id: string;
  version: number;
  title: string;
  updatedAt: string;
} {
  return {
    id: note.id,
    version: note.version,
    title: note.title,
    updatedAt: new Date(note.updatedAt).toISOString(),
  };
}

/**
 * The notes story's versioned notes on the ledger (docs/origins.md), as a Hono app with routes relative to its mount point:
 * - `GET /:id`: 200 `{id, version, title, updatedAt}` (today's state), or 404. No token needed.
 * - `PATCH /:id` with a bearer token, an Idempotency-Key (the request ID) and
 *   `{expectedVersion, title}`: inside the ledger's transaction, checks the version, applies the
 *   edit, bumps the version; the receipt commits with it. 200 `{id, version, title, requestId}`;
 *   409 `version_conflict` (with `currentVersion`, without Retry-After) for a stale version; 404
 *   for an unknown note. Both are business answers, stored and replayed like the 200. The same
 *   request ID with another command is the middleware's 422; a malformed command is refused
 *   (400/413/415/422) before the ledger, so it changes nothing.
 *
 * ```ts
 * app.route('/notes', createNotesApp({ ledger, db: sqliteServiceDatabase(store), scopeOf }));
 * ```
 */
export function createNotesApp<Tx>(deps: NotesAppDeps<Tx>): Hono {
  const { db, scopeOf, clock } = checkReceiverDeps(deps, 'an object {ledger, db, scopeOf, clock?}');
  const { ledger } = deps;
  const onError = deps.onError ?? (() => {});
  if (typeof onError !== 'function')
    throw new InvalidOptionError('onError', onError, 'a function (error, request) => void');

  // One order for every edit: caller (401), request ID (400), body within the limit (413), the
  // command (415, 400, 422), then the ledger; the handler gets the checked command.
  const guard = idempotency<Tx, NoteCommand>({
    ledger, // checked by the middleware itself
    scopeOf: (c) => scopeOf(c.req.raw),
    methods: ['PATCH'],
    maxBodyBytes: NOTE_LIMITS.maxBodyBytes,
    validate: noteCommandValidator,
    fingerprintOf: noteFingerprint,
    unauthenticated: () => unauthenticatedResponse(),
    onError,
  });

  const app = new Hono<NotesEnv<Tx>>();

  app.get('/:id', async (c) => {
    const id = c.req.param('id');
    // Outside any request's transaction, through the store: never interleaved on one SQLite connection.
    const note = await db.transaction((sql) => readNote(sql, id));
    if (note === undefined)
      return problemResponse('not_found', `there is no note ${JSON.stringify(id)}`);
    return c.json(noteJson(note));
  });

  app.patch('/:id', guard, async (c) => {
    const context = c.get('idempotency');
    // Unreachable: PATCH always goes through the ledger. A 500 rolls back.
    if (context === undefined)
      return problemResponse('internal_error', 'the edit reached the handler unchecked');
    const command = context.value;
    const id = c.req.param('id');
    const outcome = await editNote(db.within(context.tx), id, command, clock.now());
    switch (outcome.kind) {
      case 'edited': {
        const { version, title } = outcome.note;
        return c.json({ id, version, title, requestId: context.key });
      }
      case 'version_conflict':
        // No Retry-After: waiting does not help; the author must review the current note and send
        // a new command with a new request ID (docs/origins.md, "The notes' retry contract", "a conflict needs a decision").
        return problemResponse(
          NOTES_PROBLEMS.version_conflict,
          `note ${JSON.stringify(id)} is at version ${outcome.currentVersion}, not ${command.expectedVersion}: read it again and decide, then send a new command with a new request ID`,
          {
            extensions: {
              id,
              expectedVersion: command.expectedVersion,
              currentVersion: outcome.currentVersion,
            },
          },
        );
      case 'not_found':
        return problemResponse('not_found', `there is no note ${JSON.stringify(id)}`);
    }
  });

  app.on(['POST', 'PUT', 'DELETE', 'OPTIONS'], '/:id', () =>
    methodNotAllowedResponse(ALLOWED, `a note answers ${ALLOWED}`),
  );

  app.onError((error, c) => {
    // A thrown effect: the 500 is not stored, the ledger rolls the edit back and frees the key.
    onError(error, c.req.raw);
    return problemResponse(
      'internal_error',
      'the request failed and was rolled back; it may be retried with the same request ID',
    );
  });

  return app as unknown as Hono;
}
