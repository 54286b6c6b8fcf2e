import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createSqliteStore, openSqliteDatabase } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { columnTypes, postgresServiceDatabase, sqliteServiceDatabase, type ServiceDatabase } from '../../src/services/sql/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';

/** The same statements, `$n` placeholders and all, behave alike on both dialects. */
async function exerciseRunner(db: ServiceDatabase<unknown>, table: string): Promise<void> {
  const { instant } = columnTypes(db.dialect);
  await db.transaction((sql) => sql.run(`CREATE TABLE ${table} (id TEXT PRIMARY KEY, n ${instant} NOT NULL, flag INTEGER NOT NULL)`));
  const inserted = await db.transaction((sql) => sql.run(`INSERT INTO ${table} (id, n, flag) VALUES ($1, $2, $3), ($4, $5, $6)`, ['a', 1_700_000_000_000, 1, 'b', 2, 0]));
  assert.equal(inserted, 2);
  const rows = await db.transaction((sql) => sql.query<{ id: string; n: number | string }>(`SELECT id, n FROM ${table} WHERE n >= $1 ORDER BY id`, [2]));
  assert.deepEqual(rows.map((r) => [r.id, Number(r.n)]), [['a', 1_700_000_000_000], ['b', 2]]);
  // A placeholder used twice, and out of order, binds by number on both dialects.
  const changed = await db.transaction((sql) => sql.run(`UPDATE ${table} SET n = $2 WHERE id = $1 OR id = $1`, ['b', 3]));
  assert.equal(changed, 1);
  await assert.rejects(db.transaction(async (sql) => {
    await sql.run(`DELETE FROM ${table}`);
    throw new Error('roll back');
  }));
  const count = await db.transaction((sql) => sql.query<{ c: number | string }>(`SELECT count(*) AS c FROM ${table}`));
  assert.equal(Number(count[0]?.c), 2, 'a failed transaction leaves the rows alone');
}

test('SqlRunner on SQLite binds $n placeholders and rolls back with the transaction', async () => {
  const store = createSqliteStore({ database: openSqliteDatabase(':memory:') });
  try {
    await exerciseRunner(sqliteServiceDatabase(store) as ServiceDatabase<unknown>, 'things');
  } finally {
    await store.close();
  }
});

await describePostgres('the service SQL runner', ({ url, options }) => {
  test('SqlRunner on PostgreSQL behaves as on SQLite', options, async () => {
    const schema = uniqueSchemaName('oncely_sql');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const store = createPostgresStore({ pool, schema });
    after(async () => {
      await store.close();
      await pool.end();
      await dropSchema(url, schema);
    });
    await store.sweep(0, 0);
    await exerciseRunner(postgresServiceDatabase(store) as ServiceDatabase<unknown>, `"${schema}".things`);
  });
});
