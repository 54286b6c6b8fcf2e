// On a pool without pipeline mode, the store never has two queries in flight on one client: pg
// would queue the second itself, with a deprecation warning, and pg 9 drops that queue.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createPostgresStore, type PgTx } from '#oncely/stores/postgres/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

await describePostgres('a pool without pipeline mode', ({ url }) => {
  const schema = uniqueSchemaName('oncely_nopipe');
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  after(async () => {
    await pool.end();
    await dropSchema(url, schema);
  });
  /** Queries a client was asked for while one of its own was still unanswered. */
  let overlapping = 0;
  pool.on('connect', (client) => {
    let inFlight = 0;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
      if (inFlight > 0) overlapping++;
      const answer = query(...args) as Promise<unknown> | undefined;
      // A callback-style query (pg's own) returns nothing: not one of the store's.
      if (typeof answer?.finally !== 'function') return answer;
      inFlight++;
      return answer.finally(() => inFlight--);
    };
  });

  it('a new key (claim, effect, receipt, COMMIT), a replay and a failed effect each wait for the answer before the next query', async () => {
    const store = createPostgresStore({ pool, schema });
    await store.sweep(0, 0);
    await pool.query(`CREATE TABLE "${schema}".effects (id TEXT NOT NULL)`);
    overlapping = 0;
    const ledger = createLedger({ store });
    const effect = async (tx: PgTx): Promise<{ status: number; headers: []; body: Uint8Array }> => {
      await tx.query(`INSERT INTO "${schema}".effects (id) VALUES ($1)`, ['a']);
      return { status: 201, headers: [], body: new Uint8Array([1]) };
    };
    const request = { scope: 's', key: 'k1', fingerprint: 'f' };
    assert.equal((await ledger.execute(request, effect)).kind, 'executed');
    assert.equal((await ledger.execute(request, effect)).kind, 'replayed');
    await assert.rejects(
      ledger.execute({ scope: 's', key: 'k2', fingerprint: 'f' }, async (tx) => {
        await effect(tx);
        throw new Error('the effect failed after its write');
      }),
      /the effect failed/,
    );
    const rows = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects`);
    assert.equal(rows.rows[0].n, 1, 'the failed effect rolled back');
    assert.equal(overlapping, 0, 'no query was sent while another was unanswered on its client');
    await store.close();
  });
});
