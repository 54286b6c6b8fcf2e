import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { createOutboxUiApp } from '#cli/outbox-ui/outbox-ui-server.js';
import { createJournal, type JournalStore } from '#oncely/journal/index.js';
import { createMemoryJournalStore } from '#oncely/stores/memory/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { seedDeadLetters } from '../../journal/dead-letter-seed.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../../stores/postgres-env.js';
import { tempDir } from '../../support/temp-dir.js';

const TOKEN = 'test-token-0123456789';
const ORIGIN = 'http://127.0.0.1:8790';
const dir = tempDir('oncely-outbox-api-');

/** The API on a seeded journal (see seedDeadLetters), asked in-process. */
async function seeded(store: JournalStore<unknown>) {
  const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
  const t = await seedDeadLetters(store, clock);
  const journal = createJournal({ store, clock });
  const app = createOutboxUiApp(journal, TOKEN, dir);
  const ask = (path: string, init: RequestInit = {}, token = TOKEN) =>
    app.fetch(
      new Request(`${ORIGIN}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, host: '127.0.0.1:8790', ...init.headers },
      }),
    );
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    ask('/api/replay', {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', origin: ORIGIN, ...headers },
    });
  const keysOf = async (path: string): Promise<string[]> => {
    const response = await ask(path);
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { intents: { key: string }[] }).intents.map((i) => i.key);
  };
  /** Every intent's state: what "nothing changed" compares. */
  const states = async () =>
    Object.fromEntries((await journal.list()).map((i) => [i.key, [i.state, i.policy.maxAttempts]]));
  return { t, journal, ask, post, keysOf, states };
}

const iso = (ms: number) => new Date(ms).toISOString();

async function assertProblem(response: Response, status: number, code: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('content-type'), 'application/problem+json');
  const problem = (await response.json()) as { code: string; detail: string };
  assert.equal(problem.code, code);
  assert.ok(problem.detail.length > 0);
}

function runApiSuite(name: string, open: () => Promise<JournalStore<unknown>>, options = {}): void {
  describe(`outbox view API: ${name}`, options, () => {
    it('lists with filters (states, target, prefix, since) and pages by key', async () => {
      const store = await open();
      try {
        const { t, keysOf } = await seeded(store);
        assert.deepEqual(await keysOf('/api/intents?state=refused,gave_up,unknown'), [
          'u1',
          'g1',
          'r1',
        ]);
        assert.deepEqual(await keysOf('/api/intents?target=http://a.test/orders/1'), ['r1']);
        assert.deepEqual(await keysOf('/api/intents?targetPrefix=http://b.test/'), ['c1', 'u1']);
        assert.deepEqual(await keysOf(`/api/intents?since=${iso(t + 2000)}`), ['c1', 'd1', 'u1']);
        assert.deepEqual(await keysOf('/api/intents?limit=4'), ['p1', 'c1', 'd1', 'u1']);
        assert.deepEqual(await keysOf('/api/intents?limit=4&after=u1'), ['g1', 'r1']);
      } finally {
        await store.close();
      }
    });

    it('gives one intent with its attempt timeline; an unknown key is 404', async () => {
      const store = await open();
      try {
        const { ask } = await seeded(store);
        const u1 = (await (await ask('/api/intents/u1')).json()) as {
          state: string;
          attemptList: { attempt: number; outcome: string; durationMs: number; detail: string }[];
        };
        assert.equal(u1.state, 'unknown');
        assert.deepEqual(
          u1.attemptList.map((a) => [a.attempt, a.outcome, typeof a.durationMs]),
          [[1, 'unknown', 'number']],
        );
        await assertProblem(await ask('/api/intents/nope'), 404, 'intent_not_found');
      } finally {
        await store.close();
      }
    });

    it('replays one by key, all since an instant, all for a target; each stays under its key', async () => {
      const store = await open();
      try {
        const { t, journal, post } = await seeded(store);
        const one = (await (await post({ key: 'r1' })).json()) as { reopened: string[] };
        assert.deepEqual(one.reopened, ['r1']);
        assert.equal((await journal.get('r1'))?.state, 'pending');
        const dry = await post({ since: iso(t + 1000), dryRun: true });
        assert.deepEqual(((await dry.json()) as { reopened: string[] }).reopened, []);
        assert.equal((await journal.get('g1'))?.state, 'gave_up', 'a dry run changes nothing');
        const onB = (await (await post({ targetPrefix: 'http://b.test/' })).json()) as {
          selected: { key: string }[];
          reopened: string[];
        };
        assert.deepEqual([onB.selected.map((i) => i.key), onB.reopened], [['u1'], ['u1']]);
        const since = (await (await post({ since: iso(t + 1000) })).json()) as {
          reopened: string[];
        };
        assert.deepEqual(since.reopened, ['g1'], 'u1 is pending already');
        assert.equal((await journal.get('c1'))?.state, 'cancelled', 'cancelled only when named');
      } finally {
        await store.close();
      }
    });

    it('answers bad input with problem+json and changes nothing', async () => {
      const store = await open();
      try {
        const { ask, post, states } = await seeded(store);
        const before = await states();
        for (const query of [
          'state=nope',
          'limit=0',
          'limit=501',
          'since=yesterday',
          'after=',
          'bogus=1',
        ])
          await assertProblem(await ask(`/api/intents?${query}`), 400, 'invalid_filter');
        for (const body of [
          'not json',
          [],
          {},
          { key: 'r1', since: '2026-12-01' },
          { state: 'delivered' },
          { state: ['refused', 'pending'] },
          { since: 'yesterday' },
          { key: '' },
          { all: 'yes' },
          { maxAttempts: 0, all: true },
          { bogus: 1 },
        ])
          await assertProblem(await post(body), 400, 'invalid_replay');
        await assertProblem(await post({ key: 'd1' }), 409, 'intent_not_dead');
        await assertProblem(await post({ key: 'nope' }), 404, 'intent_not_found');
        await assertProblem(
          await post({ all: true }, { origin: 'http://evil.test' }),
          403,
          'cross_site',
        );
        await assertProblem(
          await post({ all: true }, { 'sec-fetch-site': 'cross-site' }),
          403,
          'cross_site',
        );
        await assertProblem(
          await post({ all: true }, { 'content-type': 'text/plain' }),
          415,
          'unsupported_media_type',
        );
        await assertProblem(
          await ask(
            '/api/replay',
            { method: 'POST', body: '{"all":true}' },
            'wrong-token-0123456789',
          ),
          401,
          'unauthenticated',
        );
        await assertProblem(await ask('/api/intents', {}, ''), 401, 'unauthenticated');
        assert.deepEqual(await states(), before);
      } finally {
        await store.close();
      }
    });
  });
}

runApiSuite('memory', async () => createMemoryJournalStore());
let n = 0;
runApiSuite('sqlite', async () =>
  createSqliteJournalStore({ database: () => openSqliteDatabase(join(dir, `j-${++n}.db`)) }),
);
await describePostgres('the outbox view API', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_outbox_api');
  const pool = url ? new pg.Pool({ connectionString: url, max: 4 }) : undefined;
  after(async () => {
    if (!pool) return;
    await pool.end();
    await dropSchema(url, schema);
  });
  runApiSuite(
    'postgres',
    async () => {
      const store = createPostgresJournalStore({ pool: pool!, schema, table: `intents_${++n}` });
      await store.ready();
      return store as JournalStore<unknown>;
    },
    options,
  );
});
