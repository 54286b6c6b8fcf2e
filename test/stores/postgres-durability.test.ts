import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createLedger, jsonReceipt } from '../../src/ledger/index.js';
import {
  createPostgresStore,
  type PgPool,
  type PgQueryConfig,
  type PgTx,
} from '../../src/stores/postgres/index.js';
import { VirtualClock } from '../../src/time/index.js';
import { inFlight } from './conformance.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';

/**
 * The PostgreSQL store's durability rule on the real server: the ledger's bookkeeping statements
 * (claim, takeover, release) commit asynchronously, the effect + receipt transaction synchronously,
 * and no pooled connection keeps a changed setting. Two kinds of evidence:
 *  - what is sent, through a recording pool (the store depends only on the PgPool slice);
 *  - what the server did, from WAL positions read on a separate connection. A synchronous commit
 *    returns only once the WAL is flushed past its commit record, so after it the flush position
 *    is always beyond any insert position read before it (or inside its transaction). Seeing the
 *    flush position NOT past the insert position read just before a claim proves that the claim
 *    returned unflushed. That can be hidden by the WAL writer or another session's flush in
 *    between, so it is tried a number of times and must be seen at least once; the synchronous
 *    side must hold every time.
 */
const START_AT = 1_700_000_000_000;
const LEASE_MS = 30_000;
const TRIES = 50;

await describePostgres('the store durability tests', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_dur');
  const monitor = url ? new pg.Client({ connectionString: url }) : undefined;
  const pools: pg.Pool[] = [];
  const makePool = (sessionSetting?: string): pg.Pool => {
    const pool = new pg.Pool({
      connectionString: url,
      max: 1,
      ...(sessionSetting ? { options: `-c synchronous_commit=${sessionSetting}` } : {}),
    });
    pools.push(pool);
    return pool;
  };
  after(async () => {
    if (!monitor) return;
    await monitor.end();
    await Promise.all(pools.map((p) => p.end()));
    await dropSchema(url, schema);
  });

  /** WAL positions, read on the monitor connection (a SELECT writes no WAL). */
  const walInsert = async (): Promise<string> =>
    (await monitor!.query('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
  const flushedPast = async (lsn: string): Promise<boolean> =>
    (await monitor!.query('SELECT pg_current_wal_flush_lsn() > $1::pg_lsn AS past', [lsn])).rows[0]
      .past;

  /** A pool that logs each statement: 'pool <sql>' for autocommit ones, 'client <sql>' inside transactions. */
  function recording(inner: pg.Pool): { pool: PgPool; take(): string[] } {
    let events: string[] = [];
    const short = (text: string) =>
      text
        .replace(/\s+/g, ' ')
        .replace(/"[^"]*"\./g, '')
        .replace(/"/g, '');
    const textOf = (query: string | PgQueryConfig): string =>
      typeof query === 'string' ? query : query.text;
    const pool: PgPool = {
      query: (text: string | PgQueryConfig, values?: unknown[]) => (
        events.push(`pool ${short(textOf(text))}`),
        inner.query(text as string, values)
      ),
      async connect() {
        const client = await inner.connect();
        return {
          query: (text: string | PgQueryConfig, values?: unknown[]) => (
            events.push(`client ${short(textOf(text))}`),
            client.query(text as string, values)
          ),
          release: (destroy?: boolean | Error) => client.release(destroy),
        };
      },
      end: () => inner.end(),
    };
    const take = (): string[] => {
      const taken = events;
      events = [];
      return taken;
    };
    return { pool, take };
  }

  let n = 0;
  async function setUp(sessionSetting?: string) {
    if (n === 0) await monitor!.connect();
    const inner = makePool(sessionSetting);
    const rec = recording(inner);
    const table = `ledger_${++n}`;
    const store = createPostgresStore({ pool: rec.pool, schema, table });
    await store.sweep(START_AT, 0); // creates the schema, the table and the partition of START_AT
    const effects = `"${schema}".effects_${n}`;
    await inner.query(`CREATE TABLE ${effects} (id TEXT NOT NULL)`);
    const clock = new VirtualClock({ startAt: START_AT });
    const ledger = createLedger({ store, clock, leaseMs: LEASE_MS });
    rec.take();
    return { inner, rec, store, clock, ledger, effects };
  }
  const req = (key: string) => ({ scope: 'alice', key, fingerprint: 'fp' });
  const ASYNC =
    /FROM \(SELECT set_config\('synchronous_commit', 'off', true\)\)|USING \(SELECT set_config\('synchronous_commit', 'off', true\)\)/;

  it(
    'sends: the claim as one asynchronous statement, the effect + receipt in a transaction raised to synchronous',
    options,
    async () => {
      const { inner, rec, ledger, effects } = await setUp();
      let seen = '';
      const result = await ledger.execute(req('k1'), async (tx: PgTx) => {
        seen = (await tx.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`))
          .rows[0]!.s;
        await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, ['e1']);
        return jsonReceipt(201, { id: 'e1' });
      });
      assert.equal(result.kind, 'executed');
      assert.equal(seen, 'on', 'the effect runs in a synchronously committing transaction');
      const events = rec.take();
      const expected = [
        "pool SELECT c.* FROM (SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit CROSS JOIN LATERAL ledger_1_claims(", // lookup + claim, one statement
        'client BEGIN; SELECT set_config', // at the effect's first statement
        "client SELECT current_setting('synchronous_commit')",
        'client INSERT INTO effects_1', // the effect
        'client WITH done AS (UPDATE ledger_1', // the receipt, failing if the key is lost...
        'client COMMIT', // ...queued behind it (one round trip on a pipelining pool)
      ];
      assert.deepEqual(
        events.map((e, i) => (e.startsWith(expected[i] ?? '\0') ? expected[i] : e)),
        expected,
      );
      assert.match(events[0]!, ASYNC, 'the claim carries the transaction-local async setting');
      assert.match(
        events[1]!,
        /^client BEGIN; SELECT set_config\('synchronous_commit', 'on', true\) WHERE current_setting\('synchronous_commit'\) = 'off'$/,
      );
      assert.doesNotMatch(
        events.slice(1).join('\n'),
        /'off', true/,
        'nothing in the effect transaction relaxes it',
      );
      assert.equal(
        (await inner.query('SHOW synchronous_commit')).rows[0].synchronous_commit,
        'on',
        'the pooled connection is left as it came',
      );
    },
  );

  it(
    'the server: a claim, a takeover and a release return before the WAL is flushed past them',
    options,
    async () => {
      const { rec, store, clock } = await setUp();
      // Every phase writes all TRIES rows (the next phase works on each of them), and at least one
      // write must return before the WAL was flushed past it: a synchronous commit never can. The
      // background WAL writer may flush some in between, so one is enough.
      const observe = async (what: string, write: (i: number) => Promise<boolean>) => {
        let unflushed = 0;
        for (let i = 0; i < TRIES; i++) {
          const before = await walInsert();
          assert.equal(await write(i), true, `${what} ${i} wrote its row`);
          if (!(await flushedPast(before))) unflushed++;
        }
        assert.ok(
          unflushed > 0,
          `${what}: the WAL was flushed past every one of ${TRIES} writes: it commits synchronously`,
        );
      };
      await observe(
        'claim',
        async (i) => (await store.claim(inFlight('alice', `c-${i}`, `t-${i}`, START_AT))).won,
      );
      assert.equal(
        (
          await monitor!.query(
            `SELECT count(*)::int AS c FROM "${schema}".ledger_${n} WHERE key LIKE 'c-%'`,
          )
        ).rows[0].c > 0,
        true,
        'other sessions see an async claim at once',
      );
      await clock.advance(LEASE_MS);
      await observe('takeover', (i) =>
        store.swap(
          { scope: 'alice', key: `c-${i}`, token: `t-${i}`, state: 'in_flight' },
          inFlight('alice', `c-${i}`, `u-${i}`, START_AT + LEASE_MS),
        ),
      );
      await observe('release', (i) =>
        store.remove({ scope: 'alice', key: `c-${i}`, token: `u-${i}`, state: 'in_flight' }),
      );
      const writes = rec.take().filter((e) => /^pool (WITH ins AS \(INSERT|UPDATE|DELETE)/.test(e));
      assert.ok(writes.length >= 3);
      assert.deepEqual(
        writes.filter((e) => !ASYNC.test(e)),
        [],
        'every bookkeeping statement carries the async setting',
      );
    },
  );

  it(
    'the server: with a session default of off, the effect + receipt commit still flushes the WAL, every time',
    options,
    async () => {
      const { inner, ledger, effects } = await setUp('off');
      for (let i = 0; i < 10; i++) {
        let inside = '';
        const result = await ledger.execute(req(`k-${i}`), async (tx: PgTx) => {
          await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, [`e-${i}`]);
          inside = (await tx.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l'))
            .rows[0]!.l;
          return jsonReceipt(201, { i });
        });
        assert.equal(result.kind, 'executed');
        assert.equal(
          await flushedPast(inside),
          true,
          `request ${i}: its commit returned before the WAL was flushed`,
        );
      }
      assert.equal(
        (await inner.query('SHOW synchronous_commit')).rows[0].synchronous_commit,
        'off',
        'the session default is left as it came',
      );

      // The control: the same transaction without the store's BEGIN does return unflushed at least
      // once, so the check above can tell the two apart.
      let unflushed = false;
      for (let i = 0; i < TRIES && !unflushed; i++) {
        const client = await inner.connect();
        try {
          await client.query('BEGIN');
          await client.query(`INSERT INTO ${effects} (id) VALUES ($1)`, [`control-${i}`]);
          const inside = (await client.query('SELECT pg_current_wal_insert_lsn()::text AS l'))
            .rows[0].l;
          await client.query('COMMIT');
          unflushed = !(await flushedPast(inside));
        } finally {
          client.release();
        }
      }
      assert.equal(
        unflushed,
        true,
        'a transaction at synchronous_commit = off should have returned unflushed at least once',
      );
    },
  );

  it(
    'a stronger level set for replication (remote_apply) is kept, not lowered to on',
    options,
    async () => {
      const { ledger } = await setUp('remote_apply');
      let seen = '';
      await ledger.execute(req('k-ra'), async (tx: PgTx) => {
        seen = (await tx.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`))
          .rows[0]!.s;
        return jsonReceipt(201, {});
      });
      assert.equal(seen, 'remote_apply');
    },
  );
});
