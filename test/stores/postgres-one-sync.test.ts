// Statements sent as one implicit transaction (one Sync, no BEGIN or COMMIT), on a real server:
// all or nothing, which statement failed, and pg's books of prepared names kept true after a
// failure, so the connection goes on working.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { PgPoolClient, PgQueryConfig } from '../../src/stores/postgres/pg-pool.js';
import {
  isOneSyncFailure,
  oneSyncSender,
  type OneSyncFailure,
} from '../../src/stores/postgres/one-sync.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

await describePostgres('one implicit transaction per Sync', ({ url }) => {
  const schema = uniqueSchemaName('oncely_onesync');
  const pool = new pg.Pool({ connectionString: url, max: 2, pipeline: true });
  const table = `"${schema}".items`;
  const insert = (id: number, name = 'one_sync_insert'): PgQueryConfig => ({
    name,
    text: `INSERT INTO ${table} (id) VALUES ($1)`,
    values: [id],
  });
  const ids = async (): Promise<number[]> =>
    (await pool.query<{ id: number }>(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r) => r.id);

  /** A statement that fails at Parse: the column does not exist (42703). */
  const typo = (name: string): PgQueryConfig => ({
    name,
    text: `INSERT INTO ${table} (nope) VALUES ($1)`,
    values: [1],
  });
  const codeOf = (failure: OneSyncFailure | undefined): string | undefined =>
    (failure as { code?: string } | undefined)?.code;

  /** Runs `fn` on a client of its own over an empty table, and gives the client back. */
  async function onClient(fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    await pool.query(`TRUNCATE ${table}`);
    const client = (await pool.connect()) as unknown as pg.PoolClient;
    try {
      await fn(client);
    } finally {
      client.release();
    }
  }

  /** Sends `statements` on `client`; the failure it rejected with, or undefined once committed. */
  async function send(
    client: PgPoolClient,
    statements: PgQueryConfig[],
  ): Promise<OneSyncFailure | undefined> {
    const oneSync = oneSyncSender(client);
    assert.ok(oneSync, 'a pg client sends one Sync');
    try {
      await oneSync(statements);
      return undefined;
    } catch (error) {
      assert.ok(isOneSyncFailure(error), `a OneSyncFailure, not ${String(error)}`);
      return error;
    }
  }

  before(async () => {
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(`CREATE TABLE ${table} (id integer PRIMARY KEY)`);
  });
  after(async () => {
    await pool.end();
    await dropSchema(url, schema);
  });

  it('commits every statement at the Sync, with no BEGIN: the session is idle again', async () => {
    await onClient(async (client) => {
      assert.equal(await send(client, [insert(1), insert(2), insert(3)]), undefined);
      assert.deepEqual(await ids(), [1, 2, 3]);
      assert.equal(client.getTransactionStatus(), 'I');
    });
  });

  it('a statement that fails rolls back those before it and skips those behind; failedAt names it; its prepared name is reused', async () => {
    await onClient(async (client) => {
      await pool.query(`INSERT INTO ${table} (id) VALUES (7)`);
      const failure = await send(client, [insert(5), insert(7), insert(8, 'one_sync_other')]);
      assert.equal(failure?.failedAt, 1);
      assert.equal(codeOf(failure), '23505');
      assert.deepEqual(await ids(), [7], 'nothing of the failed list landed');
      assert.equal(client.getTransactionStatus(), 'I');
      // The insert was prepared before it failed (a second Parse would fail with 42P05); the
      // statement behind it never was, and is prepared now.
      assert.equal(await send(client, [insert(5), insert(8, 'one_sync_other')]), undefined);
      assert.deepEqual(await ids(), [5, 7, 8]);
    });
  });

  it('a statement that fails at Parse: the names behind it are prepared by the next list that sends them', async () => {
    await onClient(async (client) => {
      const broken = typo('one_sync_typo');
      const failure = await send(client, [insert(1), broken, insert(2, 'one_sync_behind')]);
      assert.equal(failure?.failedAt, 1);
      assert.equal(codeOf(failure), '42703');
      assert.equal(await send(client, [insert(3, 'one_sync_behind'), insert(4)]), undefined);
      assert.deepEqual(await ids(), [3, 4]);
    });
  });

  it("a query pipelined ahead on the client: its ParseComplete is not taken for the list's", async () => {
    await onClient(async (client) => {
      const ahead = client.query(insert(1, 'one_sync_ahead')); // on the wire, not yet answered
      const broken = typo('one_sync_typo_2');
      const first = await send(client, [broken]);
      await ahead;
      // Had the ahead query's ParseComplete been counted as the typo's, the typo's name would be
      // on the books as prepared, and sending it again would fail with 26000 (no such statement).
      const again = await send(client, [broken]);
      assert.deepEqual([first, again].map(codeOf), ['42703', '42703']);
      assert.deepEqual(await ids(), [1]);
    });
  });

  it('a value with no text form fails its own statement before anything is sent', async () => {
    await onClient(async (client) => {
      const circular: Record<string, unknown> = {};
      circular['self'] = circular;
      const failure = await send(client, [insert(1), { ...insert(2), values: [circular] }]);
      assert.equal(failure?.failedAt, 1);
      assert.deepEqual(await ids(), []);
      assert.equal(await send(client, [insert(6)]), undefined, 'the connection is still good');
    });
  });

  it("a connection that ends fails no one statement: failedAt is the list's length", async () => {
    const client = (await pool.connect()) as unknown as pg.PoolClient;
    client.on('error', () => {}); // the server's FATAL on an idle client, if it comes first
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!
      .pid;
    // Waits (up to 5 s) until the backend has gone.
    await pool.query('SELECT pg_terminate_backend($1, 5000)', [pid]);
    try {
      const failure = await send(client, [insert(1), insert(2)]);
      assert.equal(failure?.failedAt, 2);
    } finally {
      client.release(true);
    }
  });

  it('is undefined for a client that is not pg: the caller sends BEGIN … COMMIT itself', () => {
    const double = { query: async () => ({ rows: [], rowCount: 0 }), release: () => {} };
    assert.equal(oneSyncSender(double), undefined);
  });
});
