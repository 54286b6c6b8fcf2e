import { after } from 'node:test';
import { pg } from './postgres-env.js';
import { createPostgresStore, type PgTx } from '#oncely/stores/postgres/index.js';
import { runLedgerConformance } from './conformance.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

await describePostgres('the ledger conformance suite', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_conf');
  // pg's pipeline mode, as openPostgresPool makes it (an older pg ignores the option).
  const pool = url
    ? new pg.Pool({ connectionString: url, max: 8, pipeline: true } as ConstructorParameters<
        typeof pg.Pool
      >[0])
    : undefined;
  after(async () => {
    if (!pool) return;
    await pool.end();
    await dropSchema(url, schema);
  });
  let n = 0;

  runLedgerConformance<PgTx>(
    'postgres',
    async () => {
      const table = `ledger_${++n}`;
      const effects = `"${schema}".effects_${n}`;
      // One-second tombstone partitions: the suite's instants are whole seconds, so a tombstone's
      // partition is dropped at the very instant the tombstone ends, as the suite expects.
      const store = createPostgresStore({ pool: pool!, schema, table, tombstonePartitionMs: 1000 });
      await store.sweep(0, 0); // creates the schema and the table
      await pool!.query(`CREATE TABLE ${effects} (id TEXT NOT NULL)`);
      return {
        store,
        writeEffect: async (tx, id) =>
          void (await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, [id])),
        countEffects: async (id) =>
          Number(
            (await pool!.query(`SELECT count(*) AS n FROM ${effects} WHERE id = $1`, [id])).rows[0]
              .n,
          ),
        close: () => store.close(),
      };
    },
    options,
  );
});
