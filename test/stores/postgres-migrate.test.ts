// A PostgreSQL ledger table made by an earlier oncely (hex-text fingerprints and tombstones in
// place; or bytes, but receipts not partitioned by time) is carried over to the current layout:
// every receipt, claim and tombstone answers as before. A bad row refuses the whole migration
// and leaves the schema as it was.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import { isOncelyError } from '#oncely/contract/errors.js';
import { fingerprintToBytes } from '#oncely/stores/ledger/fingerprint-bytes.js';
import { LEDGER_COLUMNS } from '#oncely/stores/ledger/ledger-row.js';
import {
  postgresLedgerTables,
  postgresTombstoneSchema,
} from '#oncely/stores/ledger/postgres/postgres-tombstones.js';
import {
  createPostgresStore,
  migratePostgresLedger,
  type PgPool,
} from '#oncely/stores/postgres/index.js';
import {
  BAD_ROW,
  EARLIER_ROWS,
  assertMigratedAnswers,
  earlierSchema,
} from './earlier-ledger-rows.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

await describePostgres('ledger migration', ({ url, options }) => {
  describe('PostgreSQL ledger migration', options, () => {
    const schema = uniqueSchemaName('oncely_migrate');
    const pool = url ? new pg.Pool({ connectionString: url, max: 2 }) : undefined;
    after(async () => {
      if (!pool) return;
      await pool.end();
      await dropSchema(url, schema);
    });
    const q = (sql: string, values: unknown[] = []) => pool!.query(sql, values);

    async function earlierTable(table: string, rows: unknown[][]): Promise<void> {
      await q(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await q(earlierSchema(`"${schema}".${table}`, 'BIGINT', 'BYTEA'));
      await q(`CREATE INDEX "${table}_expires_at" ON "${schema}".${table} (expires_at)`);
      for (const row of rows)
        await q(
          `INSERT INTO "${schema}".${table} (${LEDGER_COLUMNS.join(', ')}) VALUES (${LEDGER_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
          row,
        );
    }
    const relations = async (prefix: string): Promise<string[]> =>
      (
        await q(
          `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname LIKE $2 ORDER BY 1`,
          [schema, `${prefix}%`],
        )
      ).rows.map((r: { relname: string }) => r.relname);

    it('carries receipts, claims and tombstones of the text layout over, answering as before', async () => {
      await earlierTable('texty', EARLIER_ROWS);
      const refused = createPostgresStore({
        pool: pool as unknown as PgPool,
        schema,
        table: 'texty',
      });
      await assert.rejects(
        refused.ready!(),
        (e) =>
          isOncelyError(e) && e.code === 'ledger_layout' && /oncely ledger migrate/.test(e.message),
      );
      const report = await migratePostgresLedger(pool as unknown as PgPool, {
        schema,
        table: 'texty',
      });
      assert.deepEqual(report, {
        table: `"${schema}"."texty"`,
        found: 'earlier',
        receipts: 3,
        tombstones: 1,
      });
      assert.ok(
        !(await relations('texty_migrating')).length,
        'the earlier table and its indexes are gone',
      );
      const again = await migratePostgresLedger(pool as unknown as PgPool, {
        schema,
        table: 'texty',
      });
      assert.equal(again.found, 'current');
      const store = createPostgresStore({
        pool: pool as unknown as PgPool,
        schema,
        table: 'texty',
      });
      await assertMigratedAnswers(store);
      const { rows } = await q(`SELECT relkind FROM pg_class WHERE oid = $1::regclass`, [
        `"${schema}".texty`,
      ]);
      assert.equal(rows[0].relkind, 'p', 'partitioned by time');
    });

    it('partitions a table of the bytes layout, keeping its tombstone table', async () => {
      // The layout in between: fingerprints as bytes and a tombstone table, receipts not partitioned.
      await earlierTable('flat', EARLIER_ROWS.slice(0, 3));
      await q(
        `ALTER TABLE "${schema}".flat ALTER COLUMN fingerprint TYPE BYTEA USING CASE WHEN fingerprint ~ '^([0-9a-f]{2})+$'
           THEN '\\x01'::bytea || decode(fingerprint, 'hex') ELSE '\\x00'::bytea || convert_to(fingerprint, 'UTF8') END`,
      );
      const tables = postgresLedgerTables(schema, 'flat');
      for (const ddl of postgresTombstoneSchema(tables)) await q(ddl);
      const gone = EARLIER_ROWS[3]!;
      await q(
        `INSERT INTO ${tables.tombstones} (scope, key, fingerprint, first_seen_at, expired_at, completed_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [gone[0], gone[1], fingerprintToBytes(String(gone[2])), gone[5], gone[9], gone[8], gone[6]],
      );
      const report = await migratePostgresLedger(pool as unknown as PgPool, {
        schema,
        table: 'flat',
      });
      assert.deepEqual(
        { found: report.found, receipts: report.receipts, tombstones: report.tombstones },
        { found: 'earlier', receipts: 3, tombstones: 0 },
      );
      const store = createPostgresStore({ pool: pool as unknown as PgPool, schema, table: 'flat' });
      await assertMigratedAnswers(store);
    });

    it('refuses a row an earlier oncely could not have written, naming it, and changes nothing', async () => {
      await earlierTable('bad', [...EARLIER_ROWS, BAD_ROW]);
      const before = (await q(`SELECT * FROM "${schema}".bad ORDER BY key`)).rows;
      const made = await relations('bad');
      await assert.rejects(
        migratePostgresLedger(pool as unknown as PgPool, { schema, table: 'bad' }),
        (e) =>
          isOncelyError(e) &&
          e.code === 'ledger_migration' &&
          /key "broken" has no body/.test(e.message) &&
          /nothing was changed/.test(e.message),
      );
      assert.deepEqual(await relations('bad'), made, 'no table made, none renamed');
      assert.deepEqual((await q(`SELECT * FROM "${schema}".bad ORDER BY key`)).rows, before);
    });
  });
});
