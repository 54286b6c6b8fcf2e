// Tombstone expiry on PostgreSQL drops whole time partitions: no row is deleted, so no dead tuple
// is left behind. Read from the server's own statistics (pg_stat_user_tables) after the expiry.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

const T0 = 1_700_000_000_000;
const ROWS = 3000;
const SPREAD_MS = 180_000; // receipts expire over 3 minutes
const PARTITION_MS = 60_000;
const TOMBSTONE_MS = 600_000;

interface TableStats {
  relname: string;
  n_dead_tup: string;
  n_tup_del: string;
}

await describePostgres('tombstone partitions', ({ url, options }) => {
  describe('PostgreSQL tombstone partitions', options, () => {
    const schema = uniqueSchemaName('oncely_parts');
    // One connection: the statistics the sweep's statements leave are flushed by this very backend.
    const pool = url ? new pg.Pool({ connectionString: url, max: 1 }) : undefined;
    after(async () => {
      if (!pool) return;
      await pool.end();
      await dropSchema(url, schema);
    });

    const stats = async (): Promise<TableStats[]> => {
      await pool!.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await pool!.query<TableStats>(
        'SELECT relname, n_dead_tup, n_tup_del FROM pg_stat_user_tables WHERE schemaname = $1 ORDER BY relname',
        [schema],
      );
      return rows;
    };

    it('expiry detaches and drops whole partitions and leaves no dead tuples', async () => {
      const store = createPostgresStore({
        pool: pool!,
        schema,
        tombstonePartitionMs: PARTITION_MS,
      });
      await store.ready?.();
      // Completed receipts, bulk-loaded in one statement.
      await pool!.query(
        `INSERT INTO "${schema}".oncely_ledger (scope, key, fingerprint, state, token, first_seen_at, expires_at, completed_at, status, headers, body)
         SELECT 'alice', 'k-' || i, '\\x01'::bytea || sha256(i::text::bytea), 'completed', 't-' || i, $1::bigint, $1::bigint + i * $2::bigint / $3::bigint,
                $1::bigint, 201, 'content-type:application/json', '{}'::bytea
         FROM generate_series(1, $3::int) AS i`,
        [T0, SPREAD_MS, ROWS],
      );

      // Retention ends: every receipt becomes a tombstone, in bounded steps, into time partitions.
      const retentionOver = T0 + SPREAD_MS;
      let tombstoned = 0;
      for (
        let step = await store.sweep(retentionOver, TOMBSTONE_MS, 1000);
        step.tombstoned > 0;
        step = await store.sweep(retentionOver, TOMBSTONE_MS, 1000)
      ) {
        assert.ok(step.tombstoned <= 1000);
        tombstoned += step.tombstoned;
      }
      assert.equal(tombstoned, ROWS);
      const partitions = (await stats()).filter((t) =>
        /^oncely_ledger_tombstones_\d+$/.test(t.relname),
      );
      assert.ok(
        partitions.length >= 3,
        `tombstones spread over time partitions: ${partitions.map((p) => p.relname).join(', ')}`,
      );
      assert.equal((await store.get('alice', 'k-1'))?.state, 'expired');

      // The tombstones' time ends: their partitions go whole.
      const tombstonesOver = retentionOver + TOMBSTONE_MS + PARTITION_MS;
      assert.equal(await store.backlog(tombstonesOver), ROWS);
      const purged = await store.sweep(tombstonesOver, TOMBSTONE_MS, 1000);
      assert.deepEqual(
        purged,
        { tombstoned: 0, deleted: ROWS },
        'every tombstone went with its partition',
      );
      assert.equal(await store.backlog(tombstonesOver), 0);
      assert.equal(await store.get('alice', 'k-1'), undefined);

      const after = await stats();
      const tombstoneTables = after.filter((t) => t.relname.startsWith('oncely_ledger_tombstones'));
      assert.deepEqual(
        tombstoneTables.map((t) => t.relname),
        ['oncely_ledger_tombstones', 'oncely_ledger_tombstones_default'],
        'the range partitions are gone',
      );
      for (const t of tombstoneTables) {
        assert.equal(Number(t.n_dead_tup), 0, `${t.relname}: no dead tuples`);
        assert.equal(Number(t.n_tup_del), 0, `${t.relname}: no row was deleted`);
      }
      // The statistics do see row deletes: the receipts left the live table by DELETE (bounded steps).
      const live = after.find((t) => t.relname === 'oncely_ledger');
      assert.equal(Number(live?.n_tup_del), ROWS);
      await store.close();
    });
  });
});
