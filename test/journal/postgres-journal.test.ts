import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createJournal } from '#oncely/journal/index.js';
import pg from 'pg';
import { createPostgresJournalStore } from '#oncely/stores/postgres/index.js';
import type { PgQueryable } from '#oncely/stores/postgres-driver/pg-pool.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';
import { runJournalConformance, type JournalFixture } from './journal-conformance.js';
import { runEndpointConformance } from './endpoint-conformance.js';

await describePostgres('the journal conformance suite', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_journal');
  const pool = url ? new pg.Pool({ connectionString: url, max: 6 }) : undefined;
  after(async () => {
    if (!pool) return;
    await pool.end();
    await dropSchema(url, schema);
  });
  let n = 0;
  const openPostgres = async (): Promise<JournalFixture<PgQueryable>> => {
    const table = `intents_${++n}`;
    const orders = `"${schema}".orders_${n}`;
    const store = createPostgresJournalStore({ pool: pool!, schema, table });
    await store.ready();
    await pool!.query(`CREATE TABLE IF NOT EXISTS ${orders} (id TEXT NOT NULL)`);
    return {
      store,
      appTransaction: async (fn) => {
        const client = await pool!.connect();
        try {
          await client.query('BEGIN');
          await fn(client);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        } finally {
          client.release();
        }
      },
      writeOrder: async (tx, id) =>
        void (await tx.query(`INSERT INTO ${orders} (id) VALUES ($1)`, [id])),
      countOrders: async () =>
        Number((await pool!.query(`SELECT count(*) AS n FROM ${orders}`)).rows[0].n),
      close: () => store.close(),
    };
  };
  runJournalConformance<PgQueryable>('postgres', openPostgres, options);
  runEndpointConformance<PgQueryable>('postgres', openPostgres, options);

  describe('PostgreSQL journal store, endpoints', options, () => {
    it('a journal made before endpoints gains the column and the table on ready()', async () => {
      const table = 'before_endpoints';
      const first = createPostgresJournalStore({ pool: pool!, schema, table });
      await first.ready();
      await first.close();
      await pool!.query(`ALTER TABLE "${schema}"."${table}" DROP COLUMN endpoint`);
      await pool!.query(`DROP TABLE "${schema}"."${table}_endpoints"`);
      const store = createPostgresJournalStore({ pool: pool!, schema, table });
      const journal = createJournal({ store });
      await journal.endpoints.add({ id: 'a', url: 'http://x.test/a' });
      await journal.record({ key: 'new', endpoint: 'a', body: '{}' });
      assert.equal((await journal.get('new'))?.endpoint, 'a');
      await store.close();
    });
  });
});
