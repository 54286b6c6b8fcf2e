import { after } from 'node:test';
import {
  createPostgresStore,
  createSqlStepStore,
  type PgTx,
} from '#oncely/stores/postgres/index.js';
import { describePostgres, dropSchema, pg, uniqueSchemaName } from '../stores/postgres-env.js';
import { runStepsConformance } from './steps-conformance.js';

await describePostgres('the steps conformance suite', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_steps');
  const pool = url ? new pg.Pool({ connectionString: url, max: 8 }) : undefined;
  after(async () => {
    if (!pool) return;
    await pool.end();
    await dropSchema(url, schema);
  });
  let n = 0;
  runStepsConformance<PgTx>(
    'postgres',
    async () => {
      const i = ++n;
      const effects = `"${schema}".effects_${i}`;
      const store = createPostgresStore({ pool: pool!, schema, table: `ledger_${i}` });
      await store.sweep(0, 0); // creates the schema and the table
      await pool!.query(`CREATE TABLE ${effects} (id TEXT NOT NULL)`);
      return {
        store,
        steps: createSqlStepStore(store, { table: `${schema}.steps_${i}` }),
        write: async ({ sql }, id) =>
          void (await sql.run(`INSERT INTO ${effects} (id) VALUES ($1)`, [id])),
        count: async (id) =>
          Number(
            (await pool!.query(`SELECT count(*) AS n FROM ${effects} WHERE id = $1`, [id])).rows[0]
              .n,
          ),
        forgets: false,
        close: () => store.close(),
      };
    },
    options,
  );
});
