import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createLedger } from '#oncely/ledger/index.js';
import { createPostgresStore, openPostgresPool } from '#oncely/stores/postgres/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

// bench/chaos found both: a receiver died with "Unhandled 'error' event ... Connection terminated
// unexpectedly" when PostgreSQL stopped while a request's transaction held a pooled client (pg
// emits 'error' on a client whose connection ends, and the pool hears it only while the client is
// idle); and, once it lived, the effect's statement that failed with its connection made a 500
// (the effect's own error) where the wire contract says 503: the ledger was unavailable.
await describePostgres('a checked-out client whose connection ends', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_terminated');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });

  it(
    'fails that request only: the process lives and the next request is served',
    options,
    async () => {
      const pool = openPostgresPool(url, { max: 2, searchPath: schema });
      const killer = new pg.Client({ connectionString: url });
      await killer.connect();
      const ledger = createLedger({ store: createPostgresStore({ pool, schema }) });
      try {
        await ledger.ready();
        const request = { scope: 'chaos', key: 'k-1', fingerprint: 'f'.repeat(64) };
        const outcome = await ledger
          .execute(request, async (tx) => {
            const { rows } = await (tx as pg.PoolClient).query('SELECT pg_backend_pid() AS pid');
            // The server ends this very connection, as a stop of PostgreSQL does.
            await killer.query('SELECT pg_terminate_backend($1)', [
              (rows[0] as { pid: number }).pid,
            ]);
            await (tx as pg.PoolClient).query('SELECT 1');
            return { status: 201, headers: [], body: new Uint8Array() };
          })
          .then(
            (result) => result.kind,
            (error: Error) => `threw ${error.message}`,
          );
        assert.equal(outcome, 'unavailable');
        const next = await ledger.execute({ ...request, key: 'k-2' }, async () => ({
          status: 201,
          headers: [],
          body: new Uint8Array(),
        }));
        assert.equal(next.kind, 'executed');
      } finally {
        await killer.end();
        await pool.end();
      }
    },
  );
});
