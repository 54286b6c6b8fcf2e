import { Hono } from 'hono';
import { createClient, createLedger, seededRandom, VirtualClock } from 'oncely';
import { createNotesApp } from '../../receivers/notes/notes-app.js';
import { setUpNotes } from '../../receivers/notes/notes-table.js';
import { sqliteServiceDatabase } from '../../receivers/sql/service-database.js';
import { importOptionalDriver } from '../../shared/optional-driver.js';
import { lostReplyFetch } from './lost-reply-fetch.js';
import { lookupOf, notesExchange } from './notes-exchange.js';
import type { SqliteStore } from 'oncely/stores/sqlite';

/** One request of the story and what came of it. */
export interface NotesExchange {
  readonly request: {
    readonly method: 'GET' | 'PATCH';
    readonly path: string;
    readonly caller: string | null;
    readonly requestId: string | null;
    readonly body: unknown;
  };
  /** What the server answered. When `lost` is set, the client never saw it. */
  readonly response: {
    readonly status: number;
    readonly replayed: boolean;
    readonly retryAfter: string | null;
    readonly body: unknown;
  };
  /** The client's side when the reply was lost: what it saw instead, and the outcome it reported. */
  readonly lost: { readonly clientSaw: string; readonly outcome: string } | null;
  /** How many attempts oncely's client made for it (a 409 without Retry-After is not retried). */
  readonly attempts: number;
}

/** The documented status lookup of the notes story (docs/origins.md), asked in place of another write. */
export interface NotesLookup {
  readonly caller: string;
  readonly requestId: string;
  readonly kind: string;
  readonly receipt: { readonly status: number; readonly body: unknown } | null;
}

export interface NotesStep {
  readonly n: number;
  readonly title: string;
  readonly exchanges: readonly NotesExchange[];
  readonly lookup: NotesLookup | null;
  /** What the step shows, in the seed's words where it has them. */
  readonly means: string;
}

export interface NotesStory {
  readonly steps: readonly NotesStep[];
  /** The two statements the notes story (docs/origins.md) keeps apart: "the service recorded my edit" and "the note currently contains this title". */
  readonly summary: {
    readonly receiptVersion: number;
    readonly currentVersion: number;
    readonly currentTitle: string;
  };
}

/** The story's fixed instant and cast, so every run prints the same thing. */
export const NOTES_STORY = {
  startAt: Date.UTC(2025, 0, 6, 9, 0, 0),
  base: 'http://notes.lab',
  note: 'note-1',
  callers: { alice: 'token-alice', bob: 'token-bob' },
  titles: {
    alice: 'Agenda: budget first',
    aliceRetyped: 'Agenda: budget first!',
    bob: 'Agenda: budget first, then hiring',
  },
  requestIds: { first: 'alice-edit-1', stale: 'alice-edit-2', bob: 'bob-edit-1' },
} as const;

export type Caller = keyof typeof NOTES_STORY.callers;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The notes story's (docs/origins.md) `demo.py retries`, on oncely: the notes app on the ledger over an in-memory SQLite
 * database, driven by oncely's client through a fetch that loses one reply after the commit.
 * In process and on a virtual clock: no socket, no real wait.
 */
export async function runNotesStory(): Promise<NotesStory> {
  const S = NOTES_STORY;
  const clock = new VirtualClock({ startAt: S.startAt });
  const { openSqliteDatabase, createSqliteStore } = await importOptionalDriver(
    'better-sqlite3',
    'the notes lab (SQLite)',
    () => import('oncely/stores/sqlite'),
  );
  const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
  try {
    const { ledger, client, wire } = await notesWorld(store, clock);
    const path = `/notes/${S.note}`;

    const exchange = notesExchange(client, wire, path);
    // The client's default policy (3 attempts): it stops at once on a 422 or a 409 without Retry-After.
    const edit = (
      caller: Caller,
      requestId: string,
      expectedVersion: number,
      title: string,
      maxAttempts?: number,
    ) => exchange('PATCH', caller, requestId, { expectedVersion, title }, maxAttempts);
    const read = () => exchange('GET', null, null);

    const steps: NotesStep[] = [];
    const step = (
      title: string,
      exchanges: NotesExchange[],
      means: string,
      lookup: NotesLookup | null = null,
    ): void => void steps.push({ n: steps.length + 1, title, exchanges, lookup, means });

    step(
      'Alice reads note-1',
      [await read()],
      'She reviews version 1: that is the state her edit will expect.',
    );

    await clock.advance(5 * MINUTE_MS);
    wire.dropNextReply();
    // One attempt only: the retry is a step of its own here (oncely's client would resend it under the same key).
    const first = await edit('alice', S.requestIds.first, 1, S.titles.alice, 1);
    step(
      'Alice edits note-1; the server commits, then the reply is lost',
      [first],
      'A timeout tells us the caller stopped waiting, not whether the requested work happened. Alice keeps the request ID and the whole command together.',
    );

    await clock.advance(MINUTE_MS);
    const found = await ledger.lookup('alice', S.requestIds.first);
    step(
      'Instead of guessing, Alice asks the status lookup for her request ID',
      [],
      'The service recorded the edit. The safe next move is the exact retry, never a new request ID.',
      lookupOf('alice', S.requestIds.first, found),
    );

    step(
      'The exact retry: same request ID, same command',
      [await edit('alice', S.requestIds.first, 1, S.titles.alice), await read()],
      'An exact retry returns the first receipt (Idempotent-Replayed: true). The note reached version 2 and stays there.',
    );

    step(
      'The same request ID with a different title',
      [await edit('alice', S.requestIds.first, 1, S.titles.aliceRetyped), await read()],
      'A request-ID conflict: the ID names one operation, and this is another. Nothing changed.',
    );

    step(
      'The old command under a new request ID',
      [await edit('alice', S.requestIds.stale, 1, S.titles.alice)],
      'A version conflict: the note is at version 2, the command was reviewed against 1. No Retry-After, so the client does not retry: ' +
        'read the note again, decide, and send a newly reviewed command with a new ID.',
    );

    await clock.advance(HOUR_MS);
    step(
      'Bob reads note-1 at version 2 and edits it',
      [await read(), await edit('bob', S.requestIds.bob, 2, S.titles.bob)],
      'Another editor moves the note on to version 3.',
    );

    await clock.advance(HOUR_MS);
    const replay = await edit('alice', S.requestIds.first, 1, S.titles.alice);
    const today = await read();
    step(
      'Alice retries her first request once more, then reads the note',
      [replay, today],
      "The receipt is not today's state: the replay still says version 2 (what her operation did); the note says 3. Read the target again before reporting its state.",
    );

    const version = (e: NotesExchange) => (e.response.body as { version: number }).version;
    const current = today.response.body as { version: number; title: string };
    return {
      steps,
      summary: {
        receiptVersion: version(replay),
        currentVersion: current.version,
        currentTitle: current.title,
      },
    };
  } finally {
    await store.close();
  }
}

/**
 * The notes app on the ledger over `store`, and oncely's client reaching it in process through a
 * fetch that can lose a reply after the commit.
 */
async function notesWorld(store: SqliteStore, clock: VirtualClock) {
  const S = NOTES_STORY;
  const db = sqliteServiceDatabase(store);
  await setUpNotes(db, { clock });
  const ledger = createLedger({ store, clock });
  const tokens = new Map<string, Caller>(
    Object.entries(S.callers).map(([caller, token]) => [token, caller as Caller]),
  );
  const notes = createNotesApp({
    ledger,
    db,
    clock,
    scopeOf: (r) => tokens.get(r.headers.get('authorization')?.replace(/^Bearer /, '') ?? ''),
  });
  const app = new Hono().route('/notes', notes);
  const wire = lostReplyFetch((request) => app.fetch(request));
  // The attempt timer never fires (nothing advances it): the only lost reply is the one we drop.
  const client = createClient({
    fetch: wire.fetch,
    clock,
    timer: new VirtualClock({ autoAdvance: false }),
    random: seededRandom(4),
  });
  return { ledger, client, wire };
}
