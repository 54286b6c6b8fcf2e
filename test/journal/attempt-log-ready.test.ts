import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { VirtualClock, seededRandom } from '#oncely/time/index.js';
import { createJournal, createOutboxWorker, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

const TARGET = 'http://receiver.test/hooks';
const LOG_COLUMNS = ['duration_ms', 'response_headers', 'response_body', 'response_truncated'];

/** Every attempt answers 503 with a body the log can keep. */
const busy = (async () =>
  new Response('busy', { status: 503, headers: { 'x-reason': 'busy' } })) as typeof fetch;

/**
 * A journal made before the attempt log (`toEarlier` drops its columns): ready() adds them, the
 * attempt made before reads back with no response and no duration, and the next one is logged.
 */
async function migratesAnEarlierJournal(
  open: () => JournalStore<unknown>,
  toEarlier: () => Promise<void>,
): Promise<void> {
  const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
  const first = open();
  const journal = createJournal({ store: first, clock });
  await journal.record({ key: 'old', target: TARGET, body: '{}', maxAttempts: 3 });
  await createOutboxWorker({ store: first, clock, fetch: busy, random: seededRandom(1) }).runOnce();
  await first.close();
  await toEarlier();
  const store = open();
  try {
    await store.ready();
    await store.ready();
    const [earlier] = await store.attempts('old');
    assert.equal(earlier!.status, 503);
    assert.equal(earlier!.response, null, 'written before the log: no response kept');
    assert.equal(earlier!.durationMs, null);
    await clock.advance(24 * 3600 * 1000);
    await createOutboxWorker({ store, clock, fetch: busy, random: seededRandom(1) }).runOnce();
    const [, logged] = await store.attempts('old');
    assert.equal(logged!.response?.headers['x-reason'], 'busy');
    assert.equal(new TextDecoder().decode(logged!.response!.body), 'busy');
  } finally {
    await store.close();
  }
}

describe('ready() on a journal made before the attempt log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-attempt-log-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('SQLite: adds the columns; earlier attempts read back without a response', async () => {
    const file = join(dir, 'journal.db');
    await migratesAnEarlierJournal(
      () => createSqliteJournalStore({ database: () => openSqliteDatabase(file) }),
      async () => {
        const db = openSqliteDatabase(file);
        for (const column of LOG_COLUMNS)
          db.exec(`ALTER TABLE oncely_intents_attempts DROP COLUMN ${column}`);
        db.close();
      },
    );
  });
});

await describePostgres('ready() on a journal made before the attempt log', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_attempt_log');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });
  it(
    'PostgreSQL: adds the columns; earlier attempts read back without a response',
    options,
    async () => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      try {
        await migratesAnEarlierJournal(
          () => createPostgresJournalStore({ pool, schema }),
          async () => {
            for (const column of LOG_COLUMNS)
              await pool.query(
                `ALTER TABLE "${schema}".oncely_intents_attempts DROP COLUMN ${column}`,
              );
          },
        );
      } finally {
        await pool.end();
      }
    },
  );
});
