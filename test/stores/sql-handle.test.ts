import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import type { LedgerStore, SqlHandle } from '#oncely/ledger/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { createPostgresStore } from '#oncely/stores/postgres/index.js';
import { TransactionEndedError } from '#oncely/stores/store-errors.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

/** The same statements, `$n` placeholders and all, give the same answers on both dialects. */
async function exerciseHandle(store: LedgerStore<unknown>, table: string): Promise<void> {
  const within = <T>(fn: (sql: SqlHandle) => Promise<T>): Promise<T> =>
    store.transaction((tx) => fn(store.sql!(tx)));
  // DDL is where the dialects differ (an auto-numbered key); everything after it is shared.
  await within(async (sql) => {
    const id = sql.dialect === 'postgres' ? 'SERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY';
    await sql.run(
      `CREATE TABLE ${table} (id ${id}, name TEXT NOT NULL, n BIGINT NOT NULL, flag INTEGER NOT NULL)`,
    );
  });

  const first = await within((sql) =>
    sql.run(`INSERT INTO ${table} (name, n, flag) VALUES ($1, $2, $3) RETURNING id`, [
      'a',
      1_700_000_000_000,
      true,
    ]),
  );
  assert.deepEqual(first, { rowCount: 1, insertedId: 1 });
  const second = await within((sql) =>
    sql.run(`INSERT INTO ${table} (name, n, flag) VALUES ($1, $2, $3) RETURNING id`, [
      'b',
      2,
      false,
    ]),
  );
  assert.deepEqual(second, { rowCount: 1, insertedId: 2 });
  // Without RETURNING there is no id on either dialect (no SQLite-only rowid to rely on).
  const plain = await within((sql) =>
    sql.run(`INSERT INTO ${table} (name, n, flag) VALUES ($1, 3, 0), ($2, 4, 0)`, ['c', 'd']),
  );
  assert.deepEqual(plain, { rowCount: 2, insertedId: undefined });

  // A placeholder used twice and out of order binds by number; booleans bind as 1/0.
  const changed = await within((sql) =>
    sql.run(`UPDATE ${table} SET flag = $2 WHERE name = $1 OR name = $1`, ['b', 1]),
  );
  assert.equal(changed.rowCount, 1);
  const row = await within((sql) =>
    sql.get<{ name: string; flag: number }>(`SELECT name, flag FROM ${table} WHERE id = $1`, [
      first.insertedId,
    ]),
  );
  assert.deepEqual(row, { name: 'a', flag: 1 });
  assert.equal(
    await within((sql) => sql.get(`SELECT name FROM ${table} WHERE id = $1`, [99])),
    undefined,
  );
  const flagged = await within((sql) =>
    sql.all<{ name: string }>(`SELECT name FROM ${table} WHERE flag = $1 ORDER BY name`, [1]),
  );
  assert.deepEqual(
    flagged.map((r) => r.name),
    ['a', 'b'],
  );

  // A failed transaction leaves the rows alone; CAST(count(*) AS INTEGER) is a number on both.
  await assert.rejects(
    within(async (sql) => {
      await sql.run(`DELETE FROM ${table}`);
      throw new Error('roll back');
    }),
  );
  const count = await within((sql) =>
    sql.get<{ c: number }>(`SELECT CAST(count(*) AS INTEGER) AS c FROM ${table}`),
  );
  assert.deepEqual(count, { c: 4 });

  // A handle kept past its transaction refuses to run.
  const kept = await within(async (sql) => sql);
  await assert.rejects(kept.all(`SELECT 1`), TransactionEndedError);
}

test('the SQL handle on SQLite: $n placeholders, RETURNING ids, row counts, rollback', async () => {
  const store = createSqliteStore({ database: openSqliteDatabase(':memory:') });
  try {
    await exerciseHandle(store as LedgerStore<unknown>, 'things');
  } finally {
    await store.close();
  }
});

await describePostgres('the SQL handle', ({ url, options }) => {
  test('the SQL handle on PostgreSQL answers as on SQLite', options, async () => {
    const schema = uniqueSchemaName('oncely_sql');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const store = createPostgresStore({ pool, schema });
    after(async () => {
      await store.close();
      await pool.end();
      await dropSchema(url, schema);
    });
    await store.ready!();
    await exerciseHandle(store as LedgerStore<unknown>, `"${schema}".things`);
  });
});
