import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { VirtualClock } from '#oncely/time/index.js';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';

const TARGET = 'http://receiver.test/hooks';
const STARTED_AT = 1_700_000_000_000;

/**
 * `asEarlier` leaves the journal as an earlier oncely left it with an attempt in flight (its
 * worker then died): the intent's attempt open, its row written at its start, open, and no
 * attempt_worker or attempt_started_at columns. ready() adds them; the attempt is listed once;
 * the next worker closes that row as interrupted, under its first worker and start.
 */
async function closesAnEarlierOpenAttempt(
  open: () => JournalStore<unknown>,
  asEarlier: (statements: readonly string[]) => Promise<void>,
  intents: string,
): Promise<void> {
  const clock = new VirtualClock({ startAt: STARTED_AT });
  const first = open();
  await createJournal({ store: first, clock }).record({ key: 'old', target: TARGET, body: '{}' });
  await first.close();
  await asEarlier([
    `ALTER TABLE ${intents} DROP COLUMN attempt_worker`,
    `ALTER TABLE ${intents} DROP COLUMN attempt_started_at`,
    `UPDATE ${intents} SET attempt_count = 1, open_attempt = 1, lease_owner = 'w-old', lease_token = 't-old', lease_expires_at = ${STARTED_AT + 1000}`,
    `INSERT INTO ${intents}_attempts (key, attempt, worker, started_at) VALUES ('old', 1, 'w-old', ${STARTED_AT})`,
  ]);
  const store = open();
  try {
    await store.ready();
    const listed = await store.attempts('old');
    assert.deepEqual(
      listed.map((a) => [a.attempt, a.worker, a.startedAt, a.endedAt]),
      [[1, 'w-old', STARTED_AT, null]],
      'its own open row, once',
    );
    await clock.advance(1001);
    const fetch = (async () => new Response('ok')) as typeof globalThis.fetch;
    await createOutboxWorker({ store, clock, fetch, owner: 'w2' }).runOnce();
    const closed = await store.attempts('old');
    assert.deepEqual(
      closed.map((a) => [a.attempt, a.worker, a.startedAt, a.endedAt, a.outcome]),
      [[1, 'w-old', STARTED_AT, clock.now(), 'unknown']],
    );
  } finally {
    await store.close();
  }
}

describe('SQLite: an attempt an earlier oncely opened', () => {
  const dir = tempDir('oncely-open-attempt-');
  it('is closed in its own row by the next worker', async () => {
    const file = join(dir, 'journal.db');
    await closesAnEarlierOpenAttempt(
      () => createSqliteJournalStore({ database: () => openSqliteDatabase(file) }),
      async (statements) => {
        const db = openSqliteDatabase(file);
        for (const statement of statements) db.exec(statement);
        db.close();
      },
      'oncely_intents',
    );
  });
});

await describePostgres('PostgreSQL: an attempt an earlier oncely opened', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_open_attempt');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });
  it('is closed in its own row by the next worker', options, async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      await closesAnEarlierOpenAttempt(
        () => createPostgresJournalStore({ pool, schema }),
        async (statements) => {
          for (const statement of statements) await pool.query(statement);
        },
        `"${schema}".oncely_intents`,
      );
    } finally {
      await pool.end();
    }
  });
});
