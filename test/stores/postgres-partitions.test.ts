// Expiry on PostgreSQL drops whole time partitions, receipts and tombstones alike: no row is
// deleted, so no dead tuple is left behind. Read from the server's own statistics
// (pg_stat_user_tables) after the expiry. And one key stays one claim across partitions: claims
// of a key whose instants fall on both sides of a partition boundary still let exactly one win.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import { isOncelyError } from '#oncely/contract/errors.js';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { LEDGER_COLUMNS, entryValues } from '#oncely/stores/ledger/ledger-row.js';
import { LEDGER_COLUMN_TYPES } from '#oncely/stores/ledger/postgres/postgres-ledger-columns.js';
import { createPostgresStore, type PgPool } from '#oncely/stores/postgres/index.js';
import type { PgQueryConfig } from '#oncely/stores/postgres-driver/pg-pool.js';
import {
  postgresGetSql,
  postgresLedgerTables,
} from '#oncely/stores/ledger/postgres/postgres-tombstones.js';
import { VirtualClock } from '#oncely/time/index.js';
import { inFlight } from './conformance.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

const PARTITION_MS = 60_000;
/** A partition boundary: receipts are first seen over the three minutes after it. */
const T0 = 1_700_000_040_000;
const ROWS = 3000;
const SPREAD_MS = 180_000;
const RETENTION_MS = 120_000;
const TOMBSTONE_MS = 600_000;

/** One node of EXPLAIN's JSON plan, as far as this file reads it. */
interface PlanNode {
  readonly 'Relation Name'?: string;
  readonly 'Actual Loops': number;
  readonly Plans?: PlanNode[];
}

interface TableStats {
  relname: string;
  n_dead_tup: string;
  n_tup_del: string;
  n_tup_ins: string;
}

await describePostgres('partitions', ({ url, options }) => {
  describe('PostgreSQL time partitions', options, () => {
    const schema = uniqueSchemaName('oncely_parts');
    // One connection: the statistics the sweep's statements leave are flushed by this very backend.
    const pool = url ? new pg.Pool({ connectionString: url, max: 1 }) : undefined;
    const pools: InstanceType<typeof pg.Pool>[] = [];
    after(async () => {
      if (!pool) return;
      await pool.end();
      await Promise.all(pools.map((p) => p.end()));
      await dropSchema(url, schema);
    });

    const stats = async (): Promise<TableStats[]> => {
      await pool!.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await pool!.query<TableStats>(
        'SELECT relname, n_dead_tup, n_tup_del, n_tup_ins FROM pg_stat_user_tables WHERE schemaname = $1 ORDER BY relname',
        [schema],
      );
      return rows;
    };
    const sweepAll = async (
      store: ReturnType<typeof createPostgresStore>,
      nowMs: number,
    ): Promise<{ tombstoned: number; deleted: number; steps: number }> => {
      const total = { tombstoned: 0, deleted: 0, steps: 0 };
      for (;;) {
        const step = await store.sweep(nowMs, TOMBSTONE_MS, 1000);
        assert.ok(step.tombstoned <= 1000, JSON.stringify(step)); // tombstone partitions go whole
        total.tombstoned += step.tombstoned;
        total.deleted += step.deleted;
        total.steps++;
        if (!step.busy && step.tombstoned < 1000 && step.deleted < 1000) return total;
      }
    };

    it('expiry drops whole receipt and tombstone partitions and leaves no dead tuples', async () => {
      const store = createPostgresStore({
        pool: pool!,
        schema,
        receiptPartitionMs: PARTITION_MS,
        tombstonePartitionMs: PARTITION_MS,
      });
      await store.ready?.();
      await store.preparePartitions(T0, T0 + SPREAD_MS);
      // Completed receipts first seen over three minutes (three partitions), bulk-loaded.
      await pool!.query(
        `INSERT INTO "${schema}".oncely_ledger (scope, key, fingerprint, state, token, first_seen_at, expires_at, completed_at, status, headers, body)
         SELECT 'alice', 'k-' || i, '\\x01'::bytea || sha256(i::text::bytea), 'completed', 't-' || i, s, s + $4::bigint,
                s, 201, 'content-type:application/json', '{}'::bytea
         FROM generate_series(0, $3::int - 1) AS i, LATERAL (SELECT $1::bigint + i * $2::bigint / $3::bigint AS s) x`,
        [T0, SPREAD_MS, ROWS, RETENTION_MS],
      );
      const receiptPartitions = (rows: TableStats[]) =>
        rows.filter((t) => /^oncely_ledger_p\d+$/.test(t.relname)).map((t) => t.relname);
      assert.equal(receiptPartitions(await stats()).length, 3);

      // Half-way: the first partition's receipts are all due, the others' are not (yet).
      const firstDue = T0 + PARTITION_MS + RETENTION_MS;
      assert.equal(await store.backlog(firstDue), ROWS / 3);
      const early = await sweepAll(store, firstDue);
      assert.deepEqual([early.tombstoned, early.deleted], [ROWS / 3, 0]);
      assert.equal(early.steps, 2, 'bounded steps of 1000 rows');
      assert.equal((await store.get('alice', 'k-0'))?.state, 'expired', 'a tombstone now');
      assert.equal((await store.get('alice', `k-${ROWS - 1}`))?.state, 'completed');

      // Retention over for all: every receipt partition goes whole, after its tombstones are written.
      const retentionOver = T0 + SPREAD_MS + RETENTION_MS;
      const rest = await sweepAll(store, retentionOver);
      assert.deepEqual([rest.tombstoned, rest.deleted], [(2 * ROWS) / 3, 0]);
      assert.equal(await store.backlog(retentionOver), 0);
      const afterRetention = await stats();
      assert.deepEqual(
        receiptPartitions(afterRetention).filter((name) => Number(name.slice(15)) < T0 + SPREAD_MS),
        [],
        'the loaded receipts left with their partitions',
      );
      for (const t of afterRetention) {
        assert.equal(Number(t.n_dead_tup), 0, `${t.relname}: no dead tuples`);
        assert.equal(Number(t.n_tup_del), 0, `${t.relname}: not one row deleted`);
      }
      assert.equal(
        afterRetention
          .filter((t) => /^oncely_ledger_tombstones_\d+$/.test(t.relname))
          .reduce((n, t) => n + Number(t.n_tup_ins), 0),
        ROWS,
        'one tombstone per receipt, none written twice',
      );
      assert.equal((await store.get('alice', `k-${ROWS - 1}`))?.state, 'expired');

      // The tombstones' time ends: their partitions go whole too.
      const tombstonesOver = retentionOver + TOMBSTONE_MS + PARTITION_MS;
      assert.equal(await store.backlog(tombstonesOver), ROWS);
      const purged = await sweepAll(store, tombstonesOver);
      assert.deepEqual([purged.tombstoned, purged.deleted], [0, ROWS]);
      assert.equal(await store.get('alice', 'k-1'), undefined);
      const end = await stats();
      assert.deepEqual(
        end.filter((t) => t.relname.startsWith('oncely_ledger_tombstones')).map((t) => t.relname),
        ['oncely_ledger_tombstones', 'oncely_ledger_tombstones_default'],
        'the tombstone range partitions are gone',
      );
      for (const t of end) {
        assert.equal(Number(t.n_dead_tup), 0, `${t.relname}: no dead tuples`);
        assert.equal(Number(t.n_tup_del), 0, `${t.relname}: not one row deleted`);
      }
      await store.close();
    });

    it('refuses a receipts table of the earlier layout (not partitioned) at start, and creates nothing', async () => {
      await pool!.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await pool!.query(
        `CREATE TABLE "${schema}".flat (scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint BYTEA NOT NULL, PRIMARY KEY (scope, key))`,
      );
      const store = createPostgresStore({ pool: pool!, schema, table: 'flat' });
      await assert.rejects(
        store.ready!(),
        (e) =>
          isOncelyError(e) &&
          e.code === 'ledger_layout' &&
          /is not partitioned by time: it was made by an earlier oncely; run `npx oncely ledger migrate`/.test(
            e.message,
          ),
      );
      const made = await pool!.query(
        `SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname LIKE 'flat\\_%')
              + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname LIKE 'flat\\_claim%') AS n`,
        [schema],
      );
      assert.equal(
        Number(made.rows[0].n),
        0,
        'no tombstone table, partition or function beside it',
      );
      await store.close();
    });

    it('a key claimed on both sides of a partition boundary, from two pools at once: one claim wins', async () => {
      const table = 'race';
      const boundary = T0 + PARTITION_MS;
      // Two pools are two "processes"; each store has its own view of the partitions.
      const stores = [0, 1].map(() => {
        const own = new pg.Pool({ connectionString: url, max: 8 });
        pools.push(own);
        return createPostgresStore({ pool: own, schema, table, receiptPartitionMs: PARTITION_MS });
      });
      for (const store of stores) await store.ready?.();
      for (let round = 0; round < 5; round++) {
        const key = `edge-${round}`;
        // Each claim's instant is just before or just after the boundary: two partitions.
        const claims = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            stores[i % 2]!.claim(
              inFlight('alice', key, `t-${i}`, boundary - 1 + (i % 3 === 0 ? 0 : 1)),
            ),
          ),
        );
        assert.equal(claims.filter((c) => c.won).length, 1, `round ${round}: one winner`);
        assert.ok(
          claims.every((c) => c.won || c.existing?.state === 'in_flight'),
          'every other claim answered the winner',
        );
        const { rows } = await pool!.query(
          `SELECT tableoid::regclass::text AS part FROM "${schema}".${table} WHERE key = $1`,
          [key],
        );
        assert.equal(rows.length, 1, `round ${round}: one row for the key in the whole table`);
      }

      // Through the ledger, on injected clocks either side of the boundary: one effect.
      const ran: string[] = [];
      const ledgers = [boundary - 1, boundary].map((at, i) =>
        createLedger({ store: stores[i]!, clock: new VirtualClock({ startAt: at }) }),
      );
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          ledgers[i % 2]!.execute({ scope: 'alice', key: 'edge-ledger', fingerprint: 'fp' }, () => {
            ran.push(`ledger ${i % 2}`);
            return jsonReceipt(201, { ok: true });
          }),
        ),
      );
      assert.equal(ran.length, 1, `one effect, not ${ran.join(', ')}`);
      assert.equal(answers.filter((a) => a.kind === 'executed').length, 1);
      for (const store of stores) await store.close();
    });

    it('a second claim of a key in another partition waits for the first one to commit, then answers it', async () => {
      const table = 'turns';
      const boundary = T0 + PARTITION_MS;
      const store = createPostgresStore({
        pool: pool!,
        schema,
        table,
        receiptPartitionMs: PARTITION_MS,
      });
      await store.preparePartitions(boundary - PARTITION_MS, boundary + PARTITION_MS);
      const other = new pg.Pool({ connectionString: url, max: 2 });
      pools.push(other);
      const first = await other.connect();
      try {
        // The first claim, just before the boundary, in a transaction left open.
        const entry = inFlight('alice', 'turn', 't-first', boundary - 1);
        const args = LEDGER_COLUMNS.map(
          (c, i) => `ARRAY[$${i + 1}::${LEDGER_COLUMN_TYPES[c]}]`,
        ).join(', ');
        await first.query('BEGIN');
        const { rows } = await first.query(
          `SELECT * FROM "${schema}".${table}_claims(${args})`,
          entryValues(entry),
        );
        assert.deepEqual(rows, [], 'it found no row: its own went in');
        const mine = await first.query(`SELECT token FROM "${schema}".${table}`);
        assert.deepEqual(mine.rows, [{ token: 't-first' }]);

        // The second, just after it (the next partition): it must not insert a second row.
        let settled = false;
        const second = store.claim(inFlight('alice', 'turn', 't-second', boundary));
        void second.then(() => (settled = true));
        let waiting = false;
        for (let i = 0; i < 1000 && !waiting && !settled; i++) {
          const locks = await other.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
          );
          waiting = locks.rows[0].n > 0;
        }
        assert.equal(settled, false, 'the second claim did not go ahead on its own');
        assert.equal(waiting, true, 'it waits for the first claim');
        await first.query('COMMIT');
        const answer = await second;
        assert.equal(answer.won, false);
        assert.equal(answer.won === false && answer.existing?.token, 't-first');
        const count = await other.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`);
        assert.equal(count.rows[0].n, 1);
      } finally {
        first.release();
        await store.close();
      }
    });

    it('a recent key is read from the newest partition only: the older partitions are never scanned', async () => {
      const table = 'newest';
      const store = createPostgresStore({
        pool: pool!,
        schema,
        table,
        receiptPartitionMs: PARTITION_MS,
      });
      try {
        await store.preparePartitions(T0, T0 + 3 * PARTITION_MS);
        for (let i = 0; i < 3; i++) {
          const claimed = await store.claim(
            inFlight('alice', `k${i}`, `t${i}`, T0 + i * PARTITION_MS),
          );
          assert.equal(claimed.won, true);
        }
        const get = postgresGetSql(postgresLedgerTables(schema, table));
        const { rows } = await pool!.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${get}`, [
          'alice',
          'k2',
        ]);
        const scans: Array<{ relation: string; loops: number }> = [];
        const walk = (node: PlanNode): void => {
          if (node['Relation Name'] !== undefined)
            scans.push({ relation: node['Relation Name'], loops: node['Actual Loops'] });
          for (const child of node.Plans ?? []) walk(child);
        };
        walk((rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
        const live = scans.filter(
          (s) => s.relation.startsWith(`${table}_`) && !s.relation.includes('tomb'),
        );
        assert.equal(
          live.length,
          3,
          `three receipt partitions in the plan: ${JSON.stringify(scans)}`,
        );
        assert.deepEqual(
          live.filter((s) => s.loops > 0).length,
          1,
          `only the newest is scanned: ${JSON.stringify(scans)}`,
        );
        assert.ok(
          scans.every((s) => !s.relation.includes('tomb') || s.loops === 0),
          'nor the tombstones',
        );
        assert.equal((await store.get('alice', 'k2'))?.token, 't2');
        // A claim of it finds it too (its lookup reads newest first in the same way).
        const again = await store.claim(
          inFlight('alice', 'k2', 't-again', T0 + 2 * PARTITION_MS + 5),
        );
        assert.equal(again.won === false && again.existing?.token, 't2');
      } finally {
        await store.close();
      }
    });

    it('claims made while one is on its way go in one statement; a key twice in it: the first wins, the second is answered its row', async () => {
      const own = new pg.Pool({ connectionString: url, max: 4 });
      pools.push(own);
      const claimStatements: number[] = [];
      const counting: PgPool = {
        query: (config: string | PgQueryConfig, values?: unknown[]) => {
          if (typeof config !== 'string' && /_claims"?\(/.test(config.text))
            claimStatements.push((config.values[1] as string[]).length);
          return own.query(config as string, values);
        },
        connect: () => own.connect(),
        end: () => own.end(),
      };
      const store = createPostgresStore({
        pool: counting,
        schema,
        table: 'batched',
        receiptPartitionMs: PARTITION_MS,
      });
      await store.preparePartitions(T0, T0 + PARTITION_MS);
      const keys = ['first', 'x', 'y', 'y', 'z'];
      const claims = await Promise.all(
        keys.map((key, i) => store.claim(inFlight('alice', key, `t-${i}`, T0))),
      );
      assert.deepEqual(
        claimStatements,
        [1, 4],
        'the first alone, the four made meanwhile together',
      );
      assert.deepEqual(
        claims.map((c) => c.won),
        [true, true, true, false, true],
      );
      const second = claims[3]!;
      assert.equal(second.won === false && second.existing?.token, 't-2');
      assert.equal(second.won === false && second.existing?.state, 'in_flight');
      const { rows } = await own.query(`SELECT key, token FROM "${schema}".batched ORDER BY key`);
      assert.deepEqual(rows, [
        { key: 'first', token: 't-0' },
        { key: 'x', token: 't-1' },
        { key: 'y', token: 't-2' },
        { key: 'z', token: 't-4' },
      ]);
      await store.close();
    });
  });
});
