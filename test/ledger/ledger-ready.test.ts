import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { isInvalidOptionError, isOncelyError } from '#oncely/contract/errors.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { createPostgresStore, openPostgresPool } from '#oncely/stores/postgres/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('oncely-ready-');

/** ready() rejects with one `store_unavailable` error whose message matches `why`. */
async function assertNotReady(ready: Promise<void>, why: RegExp): Promise<void> {
  await assert.rejects(ready, (error: unknown) => {
    assert.ok(
      isOncelyError(error) && error.code === 'store_unavailable',
      `a store_unavailable OncelyError, got ${String(error)}`,
    );
    assert.match(error.message, why);
    assert.doesNotMatch(error.message, /\n/, 'one line');
    return true;
  });
}

test('ready() opens a SQLite file and creates the ledger table before any request', async () => {
  const file = join(dir, 'good.db');
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  try {
    await createLedger({ store }).ready();
    const tables = await store.read((tx) =>
      tx.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'"),
    );
    assert.deepEqual(tables.map((t) => t.name).sort(), [
      'oncely_ledger',
      'oncely_ledger_tombstones',
    ]);
  } finally {
    await store.close();
  }
});

test('ready() rejects a SQLite path in a missing directory, naming the file', async () => {
  const file = join(dir, 'no-such-dir', 'ledger.db');
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  const ledger = createLedger({ store });
  await assertNotReady(
    ledger.ready(),
    new RegExp(
      `^the sqlite store cannot be used: cannot open the SQLite database "${file}": .*directory does not exist`,
    ),
  );
  // Nothing was half-opened: asking again gives the same answer, not a crash.
  await assertNotReady(ledger.ready(), /directory does not exist/);
  await store.close();
});

test('ready() rejects a SQLite path that is a directory', async () => {
  const store = createSqliteStore({ database: () => openSqliteDatabase(dir) });
  await assertNotReady(createLedger({ store }).ready(), /^the sqlite store cannot be used: /);
  await store.close();
});

test('a URL that is not postgres:// is refused when the pool is made, its password hidden', () => {
  assert.throws(
    () => openPostgresPool('mysql://app:s3cret@db/x'),
    (error: unknown) => {
      assert.ok(isInvalidOptionError(error));
      assert.match(error.message, /mysql:\/\/app:\*\*\*@db\/x/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    },
  );
  assert.throws(
    () => openPostgresPool('not a url'),
    /expected a postgres:\/\/ or postgresql:\/\/ URL/,
  );
});

test('ready() rejects a PostgreSQL URL where no server listens', async () => {
  const pool = openPostgresPool('postgres://postgres@127.0.0.1:1/test', { connectTimeoutMs: 2000 });
  const store = createPostgresStore({ pool });
  try {
    await assertNotReady(
      createLedger({ store }).ready(),
      /^the postgres store cannot be used: .*ECONNREFUSED/,
    );
  } finally {
    await pool.end();
  }
});

test('ready() on the memory store resolves at once', async () => {
  await createLedger({ store: createMemoryStore() }).ready();
});

await describePostgres('ready()', ({ url, options }) => {
  test(
    'ready() rejects a PostgreSQL URL naming a database that does not exist',
    options,
    async () => {
      const bad = new URL(url);
      bad.pathname = '/oncely_no_such_database';
      const pool = openPostgresPool(bad.href);
      try {
        await assertNotReady(
          createLedger({ store: createPostgresStore({ pool }) }).ready(),
          /database "oncely_no_such_database" does not exist/,
        );
      } finally {
        await pool.end();
      }
    },
  );

  test('ready() on PostgreSQL creates the schema and the table', options, async () => {
    const schema = uniqueSchemaName('oncely_ready');
    const pool = openPostgresPool(url, { max: 2 });
    after(async () => {
      await pool.end();
      await dropSchema(url, schema);
    });
    await createLedger({ store: createPostgresStore({ pool, schema }) }).ready();
    const { rows } = await pool.query(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [schema],
    );
    assert.deepEqual(rows, [
      { table_name: 'oncely_ledger' },
      { table_name: 'oncely_ledger_tombstones' },
      { table_name: 'oncely_ledger_tombstones_default' },
    ]);
  });
});
