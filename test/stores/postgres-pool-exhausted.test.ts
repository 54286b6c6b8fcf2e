import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { createPostgresStore, openPostgresPool } from '#oncely/stores/postgres/index.js';
import { isPostgresUnavailable } from '#oncely/stores/postgres-driver/postgres-unavailable.js';
import type { PgPoolClient } from '#oncely/stores/postgres-driver/pg-pool.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

// bench/chaos, at a load of 40 on 2 cores, saw one receiver answer 500 while it drained: the
// errors pg-pool raises itself carry no SQLSTATE or socket code, so the store took them for the
// effect's own. A pool that cannot hand out a connection in time, or has been ended, means the
// ledger is unavailable for this request: 503 + Retry-After, and the client retries.
await describePostgres('errors pg-pool raises itself', ({ url, options }) => {
  it(
    'a pool that cannot give a connection in time: the ledger is unavailable',
    options,
    async () => {
      const schema = uniqueSchemaName('oncely_pool_wait');
      const pool = openPostgresPool(url, { max: 1, connectTimeoutMs: 50, searchPath: schema });
      const ledger = createLedger({ store: createPostgresStore({ pool, schema }) });
      let held: PgPoolClient | undefined;
      try {
        await ledger.ready();
        held = await pool.connect(); // the pool's only connection, held: the next waits out 50 ms
        const waited = await pool.connect().then(
          () => assert.fail('the pool handed out a second connection'),
          (error: unknown) => error,
        );
        assert.match(String(waited), /timeout exceeded when trying to connect/);
        assert.equal(isPostgresUnavailable(waited), true);
        const outcome = await ledger.execute(
          { scope: 's', key: 'k-1', fingerprint: 'f'.repeat(64) },
          async () => jsonReceipt(201, { done: true }),
        );
        assert.equal(outcome.kind, 'unavailable');
      } finally {
        held?.release();
        await pool.end();
        await dropSchema(url, schema);
      }
    },
  );

  it(
    'a pool already ended: the ledger is unavailable, not the effect failed',
    options,
    async () => {
      const pool = openPostgresPool(url, { max: 1 });
      await pool.end();
      const ended = await pool.query('SELECT 1').then(
        () => assert.fail('an ended pool ran a query'),
        (error: unknown) => error,
      );
      assert.match(String(ended), /Cannot use a pool after calling end on the pool/);
      assert.equal(isPostgresUnavailable(ended), true);
    },
  );
});
