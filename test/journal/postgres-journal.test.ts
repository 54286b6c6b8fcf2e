import { after } from 'node:test';
import pg from 'pg';
import { createPostgresJournalStore } from '../../src/stores/postgres/index.js';
import type { PgQueryable } from '../../src/stores/postgres/pg-pool.js';
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
});
