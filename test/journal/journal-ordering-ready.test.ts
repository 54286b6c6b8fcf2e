import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { VirtualClock } from '#oncely/time/index.js';
import { createJournal, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { createSqliteJournalStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

const TARGET = 'http://receiver.test/hooks';

/**
 * A journal made before ordering keys (`toEarlier` takes the column and its index away again, as
 * that layout had neither); ready() on it adds them, and the intent already there stays unordered.
 */
async function readiesAnEarlierJournal(
  open: () => JournalStore<unknown>,
  toEarlier: () => Promise<void>,
  hasIndex: () => Promise<boolean>,
): Promise<void> {
  const clock = new VirtualClock({ startAt: 1_700_000_000_000 });
  const before = open();
  await createJournal({ store: before, clock }).record({ key: 'old', target: TARGET, body: '{}' });
  await before.close();
  await toEarlier();
  assert.equal(await hasIndex(), false);
  const store = open();
  const journal = createJournal({ store, clock });
  try {
    await store.ready();
    await store.ready();
    assert.equal(await hasIndex(), true, 'the ordered index is there');
    assert.equal((await journal.get('old'))?.orderingKey, null);
    for (const key of ['o1', 'o2'])
      await journal.record({ key, target: TARGET, body: '{}', orderingKey: 'K' });
    const claimed = await store.claim('W', clock.now(), 1000, 10);
    assert.deepEqual(claimed.map((c) => c.intent.key).sort(), ['o1', 'old'], 'o2 waits for o1');
  } finally {
    await store.close();
  }
}

describe('ready() on a journal made before ordering keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-journal-ready-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('SQLite: adds the column and its index; the intents already there are unordered', async () => {
    const file = join(dir, 'journal.db');
    await readiesAnEarlierJournal(
      () => createSqliteJournalStore({ database: () => openSqliteDatabase(file) }),
      async () => {
        const db = openSqliteDatabase(file);
        db.exec('DROP INDEX oncely_intents_ordered');
        db.exec('ALTER TABLE oncely_intents DROP COLUMN ordering_key');
        db.close();
      },
      async () => {
        const db = openSqliteDatabase(file);
        const sql = `SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'oncely_intents_ordered'`;
        const found = db.prepare(sql).get() !== undefined;
        db.close();
        return found;
      },
    );
  });
});

await describePostgres('ready() on an earlier journal', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_journal_ready');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });
  it(
    'PostgreSQL: adds the column and its index; the intents already there are unordered',
    options,
    async () => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      try {
        await readiesAnEarlierJournal(
          () => createPostgresJournalStore({ pool, schema }),
          async () =>
            void (await pool.query(
              `ALTER TABLE "${schema}".oncely_intents DROP COLUMN ordering_key`,
            )),
          async () =>
            (
              await pool.query(
                `SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'oncely_intents_ordered'`,
                [schema],
              )
            ).rowCount === 1,
        );
      } finally {
        await pool.end();
      }
    },
  );
});
