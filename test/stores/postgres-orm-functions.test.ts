import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { entryValues, LEDGER_COLUMNS } from '#oncely/stores/ledger/ledger-row.js';
import { setUpPostgresLedger } from '#oncely/stores/ledger/postgres/postgres-ledger-schema.js';
import { postgresReceiptFunction } from '#oncely/stores/ledger/postgres/postgres-receipt-function.js';
import { postgresSingleClaimFunction } from '#oncely/stores/ledger/postgres/postgres-single-claim.js';
import { RAISE_TO_SYNCHRONOUS } from '#oncely/stores/ledger/postgres/postgres-store-options.js';
import { postgresLedgerTables } from '#oncely/stores/ledger/postgres/postgres-tombstones.js';
import { inFlight } from './conformance.js';
import { describePostgres, dropSchema, pg, uniqueSchemaName } from './postgres-env.js';

/**
 * The functions an ORM's ledger calls on PostgreSQL, where its statements cannot be prepared
 * (postgres-single-claim.ts, postgres-receipt-function.ts): what they answer, and the commit level
 * each leaves on its transaction (the claim's asynchronous, for that transaction only).
 */
const AT = 1_700_000_000_000;

await describePostgres('the ORM ledger functions', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_ormfn');
  const tables = postgresLedgerTables(schema, 'ledger');
  const client = url ? new pg.Client({ connectionString: url }) : undefined;
  const claimOne = postgresSingleClaimFunction(tables).call;
  const receipt = postgresReceiptFunction(tables).call(RAISE_TO_SYNCHRONOUS);
  const level = async (): Promise<string> =>
    (await client!.query('SHOW synchronous_commit')).rows[0].synchronous_commit;
  let ready: Promise<void> | undefined;
  const setUp = (): Promise<void> =>
    (ready ??= (async () => {
      await client!.connect();
      await client!.query('BEGIN');
      await setUpPostgresLedger(client!, tables, schema);
      await client!.query(
        `CREATE TABLE "${schema}".ledger_all PARTITION OF ${tables.live} FOR VALUES FROM (0) TO (${AT * 2})`,
      );
      await client!.query('COMMIT');
    })());
  after(async () => {
    if (!client) return;
    await client.end();
    await dropSchema(url, schema);
  });

  it(
    'the claim: inserts a new key, answers the row of a claimed one, commits asynchronously',
    options,
    async () => {
      await setUp();
      const entry = inFlight('alice', 'k1', 't1', AT);
      await client!.query('BEGIN');
      const won = await client!.query(claimOne, entryValues(entry));
      assert.equal(won.rows.length, 0, 'a new key: no row found, it went in');
      assert.equal(await level(), 'off', 'the claim makes its transaction commit asynchronously');
      await client!.query('COMMIT');
      assert.equal(await level(), 'on', 'for that transaction only');
      const lost = await client!.query(
        claimOne,
        entryValues(inFlight('alice', 'k1', 't2', AT + 5)),
      );
      assert.equal(lost.rows.length, 1);
      assert.equal(lost.rows[0].token, entry.token, 'the committed row is answered');
      assert.deepEqual(Object.keys(lost.rows[0]), ['i', ...LEDGER_COLUMNS]);
    },
  );

  it(
    'the receipt: 1 when it replaced the in-flight row, 0 when the version moved on; raises the level',
    options,
    async () => {
      await setUp();
      const entry = inFlight('alice', 'k2', 't3', AT);
      await client!.query(claimOne, entryValues(entry));
      const done = {
        ...entry,
        state: 'completed',
        completedAt: AT + 1,
        receipt: { status: 201, headers: [], body: new Uint8Array([1]) },
      } as const;
      const version = [entry.scope, entry.key, entry.token, entry.state];
      await client!.query("BEGIN; SET LOCAL synchronous_commit = 'off'");
      const first = await client!.query(receipt, [...entryValues(done), ...version]);
      assert.equal(first.rows[0].completed, 1);
      assert.equal(
        await level(),
        'on',
        'the receipt raises its transaction to a synchronous commit',
      );
      await client!.query('COMMIT');
      const again = await client!.query(receipt, [...entryValues(done), ...version]);
      assert.equal(again.rows[0].completed, 0, 'the in-flight version is gone');
      const row = await client!.query(`SELECT state, status FROM ${tables.live} WHERE key = 'k2'`);
      assert.deepEqual(row.rows, [{ state: 'completed', status: 201 }]);
    },
  );
});
