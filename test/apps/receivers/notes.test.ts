import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import pg from 'pg';
import { PROBLEM_JSON } from '#oncely/contract/headers.js';
import { createLedger, type Ledger, type LedgerStore } from '#oncely/ledger/index.js';
import { createNotesApp, setUpNotes, SEED_NOTES } from '#cli/receivers/notes/index.js';
import {
  postgresServiceDatabase,
  sqliteServiceDatabase,
  type ServiceDatabase,
  type SqlHandle,
} from '#cli/receivers/sql/index.js';
import { createPostgresStore } from '#oncely/stores/postgres/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import {
  describePostgres,
  dropSchema,
  uniqueSchemaName,
  type PostgresTests,
} from '../../stores/postgres-env.js';
import { bindStore } from '../../support/bind-store.js';

const START_AT = Date.UTC(2025, 0, 6, 9, 0, 0);
const TOKENS: Record<string, string> = { 'token-alice': 'alice', 'token-bob': 'bob' };

/** One backend: a fresh ledger store and its service database, with the notes seeded. */
interface Backend {
  readonly name: string;
  open(): Promise<{
    store: LedgerStore<unknown>;
    db: ServiceDatabase<unknown>;
    close(): Promise<void>;
  }>;
}

const sqlite: Backend = {
  name: 'sqlite',
  async open() {
    const store = createSqliteStore({ database: () => openSqliteDatabase(':memory:') });
    return {
      store: store as LedgerStore<unknown>,
      db: sqliteServiceDatabase(store) as ServiceDatabase<unknown>,
      close: () => store.close(),
    };
  },
};

/** PostgreSQL at `url`: each setUp gets a schema of its own, dropped after the file. */
function postgresBackend(url: string): Backend {
  let schemaCount = 0;
  const schemas: string[] = [];
  after(async () => {
    for (const schema of schemas) await dropSchema(url, schema);
  });
  return {
    name: 'postgres',
    async open() {
      const schema = `${uniqueSchemaName('oncely_notes')}_${++schemaCount}`;
      schemas.push(schema);
      // The ledger's table (store option) and the notes' table (search_path) in one schema of their own.
      const pool = new pg.Pool({
        connectionString: url,
        max: 4,
        options: `-c search_path=${schema}`,
      });
      await pool.query(`CREATE SCHEMA "${schema}"`);
      const store = createPostgresStore({ pool, schema });
      return {
        store: store as LedgerStore<unknown>,
        db: postgresServiceDatabase(store) as ServiceDatabase<unknown>,
        close: async () => {
          await store.close();
          await pool.end();
        },
      };
    },
  };
}

interface Call {
  readonly token?: string;
  readonly key?: string;
  readonly body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  readonly raw?: string;
  readonly contentType?: string | null;
}

async function setUp(
  backend: Backend,
  tweak: {
    store?: (s: LedgerStore<unknown>) => LedgerStore<unknown>;
    db?: (d: ServiceDatabase<unknown>) => ServiceDatabase<unknown>;
  } = {},
) {
  const opened = await backend.open();
  const clock = new VirtualClock({ startAt: START_AT });
  await setUpNotes(opened.db, { clock });
  const ledgerOf = (store: LedgerStore<unknown>): Ledger<unknown> =>
    createLedger({ store, clock, leaseMs: 30_000 });
  const appOf = (ledger: Ledger<unknown>, db = opened.db) =>
    new Hono().route(
      '/notes',
      createNotesApp({
        ledger,
        db,
        clock,
        scopeOf: (r) =>
          TOKENS[/^Bearer (\S+)$/.exec(r.headers.get('authorization') ?? '')?.[1] ?? ''],
      }),
    );
  const ledger = ledgerOf(tweak.store ? tweak.store(opened.store) : opened.store);
  const app = appOf(ledger, tweak.db ? tweak.db(opened.db) : opened.db);
  const send = async (method: string, path: string, call: Call = {}) => {
    const headers = new Headers();
    if (call.token) headers.set('authorization', `Bearer ${call.token}`);
    if (call.key) headers.set('idempotency-key', call.key);
    if (call.contentType !== null)
      headers.set('content-type', call.contentType ?? 'application/json');
    const body = call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    const response = await app.fetch(
      new Request(`http://notes.test/notes/${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      }),
    );
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: text === '' ? undefined : JSON.parse(text),
    };
  };
  const edit = (
    key: string,
    expectedVersion: number,
    title: string,
    token = 'token-alice',
    id = 'note-1',
  ) => send('PATCH', id, { token, key, body: { expectedVersion, title } });
  const read = async (id = 'note-1') =>
    (await send('GET', id)).json as {
      id: string;
      version: number;
      title: string;
      updatedAt: string;
    };
  return { ...opened, clock, ledger, ledgerOf, appOf, app, send, edit, read };
}

function withApp(
  backend: Backend,
  fn: (s: Awaited<ReturnType<typeof setUp>>) => Promise<void>,
  tweak?: Parameters<typeof setUp>[1],
) {
  return async () => {
    const s = await setUp(backend, tweak);
    try {
      await fn(s);
    } finally {
      await s.close();
    }
  };
}

notesSuite(sqlite, {});
await describePostgres('the notes service', ({ url, options }) =>
  notesSuite(postgresBackend(url), options),
);

function notesSuite(backend: Backend, options: PostgresTests['options']): void {
  describe(`notes service on ${backend.name}`, options, () => {
    it(
      'serves the seeded notes at version 1 without a token, and 404 for an unknown note',
      withApp(backend, async ({ send }) => {
        for (const seeded of SEED_NOTES) {
          const got = await send('GET', seeded.id);
          assert.equal(got.status, 200);
          assert.deepEqual(got.json, {
            id: seeded.id,
            version: 1,
            title: seeded.title,
            updatedAt: '2025-01-06T09:00:00.000Z',
          });
        }
        const missing = await send('GET', 'note-404');
        assert.equal(missing.status, 404);
        assert.equal(missing.headers.get('content-type'), PROBLEM_JSON);
        assert.equal(missing.json.code, 'not_found');
      }),
    );

    it(
      "the notes story: exact retry replays, same ID + other title is 422, new ID + stale version is 409, a receipt is not today's state",
      withApp(backend, async ({ edit, send, read, clock }) => {
        await clock.advance(60_000);
        const first = await edit('req-1', 1, 'Agenda: budget first');
        assert.equal(first.status, 200);
        assert.deepEqual(first.json, {
          id: 'note-1',
          version: 2,
          title: 'Agenda: budget first',
          requestId: 'req-1',
        });
        assert.equal(first.headers.get('idempotent-replayed'), null);
        assert.equal((await read()).updatedAt, '2025-01-06T09:01:00.000Z');

        // The exact retry: the first receipt, byte for byte, and no second edit.
        const retry = await edit('req-1', 1, 'Agenda: budget first');
        assert.equal(retry.status, 200);
        assert.equal(retry.headers.get('idempotent-replayed'), 'true');
        assert.equal(retry.text, first.text);
        // The command is canonical JSON: reordered keys are the same command.
        const reordered = await send('PATCH', 'note-1', {
          token: 'token-alice',
          key: 'req-1',
          raw: '{"title":"Agenda: budget first","expectedVersion":1}',
        });
        assert.equal(reordered.headers.get('idempotent-replayed'), 'true');
        assert.equal((await read()).version, 2);

        // Same request ID, different title: a request-ID conflict, nothing applied.
        const reused = await edit('req-1', 1, 'Agenda: budget last');
        assert.equal(reused.status, 422);
        assert.equal(reused.json.code, 'key_reused');
        assert.deepEqual(await read(), {
          id: 'note-1',
          version: 2,
          title: 'Agenda: budget first',
          updatedAt: '2025-01-06T09:01:00.000Z',
        });

        // The old command under a new ID: a version conflict, without Retry-After, stored as the receipt.
        const stale = await edit('req-2', 1, 'Agenda: budget first');
        assert.equal(stale.status, 409);
        assert.equal(stale.headers.get('content-type'), PROBLEM_JSON);
        assert.equal(
          stale.headers.get('retry-after'),
          null,
          'a version conflict must not look like an in-flight 409',
        );
        assert.equal(stale.json.code, 'version_conflict');
        assert.equal(stale.json.currentVersion, 2);
        assert.equal(stale.json.expectedVersion, 1);
        const staleAgain = await edit('req-2', 1, 'Agenda: budget first');
        assert.equal(staleAgain.status, 409);
        assert.equal(staleAgain.headers.get('idempotent-replayed'), 'true');
        assert.equal(staleAgain.text, stale.text);

        // Someone else edits from version 2; the replayed receipt still says 2, the note says 3.
        const bob = await edit('req-bob-1', 2, 'Agenda: budget first, then hiring', 'token-bob');
        assert.equal(bob.status, 200);
        assert.equal(bob.json.version, 3);
        const replay = await edit('req-1', 1, 'Agenda: budget first');
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.equal(replay.json.version, 2);
        assert.deepEqual(
          { version: (await read()).version, title: (await read()).title },
          { version: 3, title: 'Agenda: budget first, then hiring' },
        );
      }),
    );

    it(
      'request IDs are scoped by caller: the same ID from another caller is another request',
      withApp(backend, async ({ edit, read }) => {
        assert.equal((await edit('shared-id', 1, 'alice wrote this')).status, 200);
        const bob = await edit('shared-id', 1, 'alice wrote this', 'token-bob');
        assert.equal(
          bob.status,
          409,
          "not a replay of alice's receipt: a new command with a stale version",
        );
        assert.equal(bob.headers.get('idempotent-replayed'), null);
        assert.equal((await read()).version, 2);
      }),
    );

    it(
      'refuses a missing token (401) and a missing request ID (400), changing nothing',
      withApp(backend, async ({ send, read }) => {
        const anonymous = await send('PATCH', 'note-1', {
          key: 'k',
          body: { expectedVersion: 1, title: 'x' },
        });
        assert.equal(anonymous.status, 401);
        assert.equal(
          (
            await send('PATCH', 'note-1', {
              token: 'token-nobody',
              key: 'k',
              body: { expectedVersion: 1, title: 'x' },
            })
          ).status,
          401,
        );
        const keyless = await send('PATCH', 'note-1', {
          token: 'token-alice',
          body: { expectedVersion: 1, title: 'x' },
        });
        assert.equal(keyless.status, 400);
        assert.equal(keyless.json.code, 'missing_key');
        // Who and which key come before the body: a bad body without a token is still a 401.
        assert.equal((await send('PATCH', 'note-1', { key: 'k', raw: '{' })).status, 401);
        assert.equal((await read()).version, 1);
      }),
    );

    it(
      'refuses a malformed command (415, 400, 422, 413) before the ledger: nothing changes and the request ID stays free',
      withApp(backend, async ({ send, read, ledger }) => {
        const alice = { token: 'token-alice', key: 'req-typo' };
        const cases: Array<[Call, number, string]> = [
          [
            { ...alice, body: { expectedVersion: 1, title: 'x' }, contentType: 'text/plain' },
            415,
            'unsupported_media_type',
          ],
          [
            { ...alice, body: { expectedVersion: 1, title: 'x' }, contentType: null },
            415,
            'unsupported_media_type',
          ],
          // JSON is UTF-8 (RFC 8259 section 8.1): another charset is refused, as the dropbox refuses it.
          [
            {
              ...alice,
              body: { expectedVersion: 1, title: 'x' },
              contentType: 'application/json; charset=latin1',
            },
            415,
            'unsupported_media_type',
          ],
          [
            {
              ...alice,
              body: { expectedVersion: 1, title: 'x' },
              contentType: 'application/json; charset=utf-16',
            },
            415,
            'unsupported_media_type',
          ],
          [
            {
              ...alice,
              body: { expectedVersion: 1, title: 'x' },
              contentType: 'application/merge-patch+json',
            },
            415,
            'unsupported_media_type',
          ],
          [{ ...alice, raw: '{"expectedVersion": 1, "title": ' }, 400, 'invalid_json'],
          [
            { ...alice, body: { expectedVersion: 1, title: 'x', record: 'note-2' } },
            422,
            'invalid_command',
          ],
          [{ ...alice, body: { expectedVersion: 0, title: 'x' } }, 422, 'invalid_command'],
          [{ ...alice, body: { expectedVersion: 1.5, title: 'x' } }, 422, 'invalid_command'],
          [{ ...alice, body: { expectedVersion: '1', title: 'x' } }, 422, 'invalid_command'],
          [{ ...alice, body: { title: 'x' } }, 422, 'invalid_command'],
          [{ ...alice, body: { expectedVersion: 1, title: '   ' } }, 422, 'invalid_command'],
          [
            { ...alice, body: { expectedVersion: 1, title: 'é'.repeat(201) } },
            422,
            'invalid_command',
          ],
          [{ ...alice, body: [1, 'x'] }, 422, 'invalid_command'],
          [
            { ...alice, raw: JSON.stringify({ expectedVersion: 1, title: 'x'.repeat(20_000) }) },
            413,
            'payload_too_large',
          ],
        ];
        for (const [call, status, code] of cases) {
          const got = await send('PATCH', 'note-1', call);
          assert.equal(got.status, status, `${JSON.stringify(call).slice(0, 120)} -> ${got.text}`);
          assert.equal(got.json.code, code);
          assert.equal(got.headers.get('content-type'), PROBLEM_JSON);
          if (status === 415) {
            assert.deepEqual(
              got.json.accepted,
              ['application/json', 'application/json; charset=utf-8'],
              'a 415 names what is accepted',
            );
            assert.equal(
              got.headers.get('accept-patch'),
              'application/json, application/json; charset=utf-8',
            );
          }
        }
        const both = await send('PATCH', 'note-1', {
          ...alice,
          body: { expectedVersion: 0, title: '', extra: 1 },
        });
        assert.equal(both.json.errors.length, 3, 'every problem is named at once');
        assert.equal((await read()).version, 1);
        assert.deepEqual(await ledger.lookup('alice', 'req-typo'), { kind: 'never_seen' });
        // 200 characters exactly is allowed (sent as UTF-8, declared in any case), and the corrected
        // command may use the same request ID.
        const fixed = await send('PATCH', 'note-1', {
          ...alice,
          body: { expectedVersion: 1, title: 'é'.repeat(200) },
          contentType: 'application/json; charset=UTF-8',
        });
        assert.equal(fixed.status, 200);
        assert.equal(fixed.json.version, 2);
      }),
    );

    it(
      'answers 404 for an unknown note (stored), and 405 for other methods',
      withApp(backend, async ({ send, edit }) => {
        const missing = await edit('req-missing', 1, 'x', 'token-alice', 'note-9');
        assert.equal(missing.status, 404);
        assert.equal(missing.json.code, 'not_found');
        assert.equal(
          (await edit('req-missing', 1, 'x', 'token-alice', 'note-9')).headers.get(
            'idempotent-replayed',
          ),
          'true',
        );
        const post = await send('POST', 'note-1', { token: 'token-alice', key: 'k', body: {} });
        assert.equal(post.status, 405);
        assert.equal(post.headers.get('allow'), 'GET, HEAD, PATCH');
      }),
    );

    it(
      'two edits racing from the same version with different IDs: exactly one wins, the other is a version conflict',
      withApp(backend, async ({ edit, read }) => {
        const results = await Promise.all([
          edit('race-a', 1, 'from a'),
          edit('race-b', 1, 'from b', 'token-bob'),
        ]);
        assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
        const winner = results.find((r) => r.status === 200)!;
        assert.deepEqual(await read().then((n) => [n.version, n.title]), [2, winner.json.title]);
      }),
    );

    it(
      'setUpNotes again keeps the edits: it only fills in missing notes',
      withApp(backend, async ({ edit, read, db }) => {
        await edit('req-1', 1, 'kept');
        await setUpNotes(db);
        assert.deepEqual([(await read()).version, (await read()).title], [2, 'kept']);
      }),
    );

    describe('failures roll the edit back', () => {
      it('a forced receipt-write failure rolls back the edit (the notes story): 503, and the same request ID then succeeds', async () => {
        const diskFull = new Error('forced receipt-write failure');
        const s = await setUp(backend, {
          store: (store) => ({
            ...bindStore(store),
            complete: async () => {
              throw diskFull;
            },
          }),
        });
        try {
          const failed = await s.edit('req-1', 1, 'never saved');
          assert.equal(failed.status, 503);
          assert.equal(failed.json.code, 'ledger_unavailable');
          assert.ok(failed.headers.get('retry-after'));
          assert.equal((await s.read()).version, 1, 'the edit rolled back with the receipt');
          const healthy = s.appOf(s.ledgerOf(s.store));
          const lookup = await s.ledgerOf(s.store).lookup('alice', 'req-1');
          assert.deepEqual(lookup, { kind: 'never_seen' });
          const retried = await healthy.fetch(
            new Request('http://notes.test/notes/note-1', {
              method: 'PATCH',
              headers: {
                authorization: 'Bearer token-alice',
                'idempotency-key': 'req-1',
                'content-type': 'application/json',
              },
              body: JSON.stringify({ expectedVersion: 1, title: 'never saved' }),
            }),
          );
          assert.equal(retried.status, 200);
          assert.equal(((await retried.json()) as { version: number }).version, 2);
        } finally {
          await s.close();
        }
      });

      it('an effect that throws after its write: 500, rolled back, the key released', async () => {
        let failNext = true;
        const s = await setUp(backend, {
          db: (db) => ({
            ...db,
            within: (tx: unknown): SqlHandle => {
              const sql = db.within(tx);
              return {
                ...sql,
                all: async <R>(text: string, params?: readonly unknown[]) => {
                  const rows = await sql.all<R>(text, params);
                  if (failNext && text.startsWith('UPDATE')) {
                    failNext = false;
                    throw new Error('crash after the write');
                  }
                  return rows;
                },
              };
            },
          }),
        });
        try {
          const failed = await s.edit('req-1', 1, 'half done');
          assert.equal(failed.status, 500);
          assert.equal(failed.json.code, 'internal_error');
          assert.equal((await s.read()).version, 1);
          const retried = await s.edit('req-1', 1, 'half done');
          assert.equal(retried.status, 200);
          assert.equal(retried.json.version, 2);
        } finally {
          await s.close();
        }
      });
    });
  });
}
