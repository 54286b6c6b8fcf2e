import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal, type JournalStore } from '#oncely/journal/index.js';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { describePostgres, suitePool } from '../stores/postgres-env.js';

const TARGET = 'http://receiver.test/hooks';

/**
 * A journal table the planner has no statistics of gets them at its first backlog
 * (postgres-journal-stats.ts): without them, every claim read and sorted the whole backlog.
 */
await describePostgres(
  'PostgreSQL journal: statistics at the first backlog',
  ({ url, options }) => {
    const { pool, schema } = suitePool(url, 'oncely_claim_stats');
    let n = 0;
    const open = async (intents: number) => {
      const table = `st_${++n}`;
      const clock = new VirtualClock({ startAt: Date.parse('2026-12-01T00:00:00Z') });
      const store = createPostgresJournalStore({ pool: pool!, schema, table }) as JournalStore;
      const journal = createJournal({ store, clock });
      for (let i = 0; i < intents; i++)
        await journal.record({ key: `k${i}`, target: TARGET, body: '{}' });
      const known = async (): Promise<boolean> =>
        (
          await pool!.query(
            `SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = 'state'`,
            [schema, table],
          )
        ).rows[0].n === 1;
      const claim = (limit: number) =>
        store.capabilities.claimStarting!.claim('w1', clock.now(), 60_000, limit);
      return { store, known, claim };
    };

    it('a full claim on a table never analyzed analyzes it', options, async () => {
      const { store, known, claim } = await open(40);
      assert.equal(await known(), false, 'a new table has no statistics');
      assert.equal((await claim(10)).length, 10);
      assert.equal(await known(), true, 'the first full claim gave the planner statistics');
      await store.close();
    });

    it('a claim that drains what is due leaves the table to autovacuum', options, async () => {
      const { store, known, claim } = await open(5);
      assert.equal((await claim(10)).length, 5);
      assert.equal(await known(), false);
      await store.close();
    });
  },
);
