import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import { createLedger, jsonReceipt } from '#oncely/ledger/index.js';
import { createPostgresStore, type PgPool, type PgTx } from '#oncely/stores/postgres/index.js';
import type { PgQueryConfig } from '#oncely/stores/postgres-driver/pg-pool.js';
import { VirtualClock } from '#oncely/time/index.js';
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
  const pools: InstanceType<typeof pg.Pool>[] = [];
  const makePool = (sessionSetting?: string): InstanceType<typeof pg.Pool> => {
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
  function recording(inner: InstanceType<typeof pg.Pool>): { pool: PgPool; take(): string[] } {
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
        events.push(`pool ${short(textOf(text))}`), inner.query(text as string, values)
      ),
      async connect() {
        const client = await inner.connect();
        return {
          query: (text: string | PgQueryConfig, values?: unknown[]) => (
            events.push(`client ${short(textOf(text))}`), client.query(text as string, values)
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
  async function setUp(sessionSetting?: string, durability: 'durable' | 'process' = 'durable') {
    if (n === 0) await monitor!.connect();
    const inner = makePool(sessionSetting);
    const rec = recording(inner);
    const table = `ledger_${++n}`;
    const store = createPostgresStore({ pool: rec.pool, schema, table, durability });
    await store.sweep(START_AT, 0); // creates the schema, the table and the partition of START_AT
    const effects = `"${schema}".effects_${n}`;
    await inner.query(`CREATE TABLE ${effects} (id TEXT NOT NULL)`);
    // The level each effect's transaction commits at, read at its COMMIT by a deferred trigger
    // (deferred triggers run at COMMIT, after every statement of the transaction).
    const levels = `"${schema}".levels_${n}`;
    await inner.query(`CREATE TABLE ${levels} (id TEXT NOT NULL, level TEXT NOT NULL)`);
    await inner.query(
      `CREATE FUNCTION "${schema}".record_level_${n}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         INSERT INTO ${levels} VALUES (NEW.id, current_setting('synchronous_commit')); RETURN NULL; END $$`,
    );
    await inner.query(
      `CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON ${effects} DEFERRABLE INITIALLY DEFERRED
         FOR EACH ROW EXECUTE FUNCTION "${schema}".record_level_${n}()`,
    );
    const levelsAtCommit = async (): Promise<string[]> =>
      (await inner.query(`SELECT level FROM ${levels} ORDER BY id`)).rows.map(
        (r: { level: string }) => r.level,
      );
    const clock = new VirtualClock({ startAt: START_AT });
    const ledger = createLedger({ store, clock, leaseMs: LEASE_MS });
    rec.take();
    return { inner, rec, store, clock, ledger, effects, levelsAtCommit };
  }
  const req = (key: string) => ({ scope: 'alice', key, fingerprint: 'fp' });
  const ASYNC =
    /FROM \(SELECT set_config\('synchronous_commit', 'off', true\)\)|USING \(SELECT set_config\('synchronous_commit', 'off', true\)\)/;

  it(
    'sends: the claim as one asynchronous statement, the effect + receipt in a transaction raised to synchronous',
    options,
    async () => {
      const { inner, rec, ledger, effects, levelsAtCommit } = await setUp();
      const result = await ledger.execute(req('k1'), async (tx: PgTx) => {
        await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, ['e1']);
        return jsonReceipt(201, { id: 'e1' });
      });
      assert.equal(result.kind, 'executed');
      assert.deepEqual(await levelsAtCommit(), ['on'], 'it commits synchronously');
      const events = rec.take();
      const expected = [
        "pool SELECT c.* FROM (SELECT set_config('synchronous_commit', 'off', true)) AS oncely_async_commit CROSS JOIN LATERAL ledger_1_claims(", // lookup + claim, one statement
        'client BEGIN', // at the effect's first statement
        'client INSERT INTO effects_1', // the effect
        'client WITH done AS (UPDATE ledger_1', // the receipt: its row says whether it matched...
        'client COMMIT', // ...and then COMMIT (ROLLBACK had the key been lost)
      ];
      assert.deepEqual(
        events.map((e, i) => (e.startsWith(expected[i] ?? '\0') ? expected[i] : e)),
        expected,
      );
      assert.match(events[0]!, ASYNC, 'the claim carries the transaction-local async setting');
      assert.equal(events[1], 'client BEGIN', 'BEGIN alone: the receipt sets the level');
      assert.match(
        events[3]!,
        /, \(SELECT set_config\('synchronous_commit', 'on', true\) WHERE current_setting\('synchronous_commit'\) = 'off'\) AS commit_level FROM done$/,
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
      const { inner, ledger, effects, levelsAtCommit } = await setUp('off');
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
      assert.deepEqual(await levelsAtCommit(), Array(10).fill('on'), 'each committed at on');
      assert.equal(
        (await inner.query('SHOW synchronous_commit')).rows[0].synchronous_commit,
        'off',
        'the session default is left as it came',
      );

      // The control: the same transaction without the store's receipt (and its level) does return unflushed at least
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
      const { ledger, effects, levelsAtCommit } = await setUp('remote_apply');
      await ledger.execute(req('k-ra'), async (tx: PgTx) => {
        await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, ['e']);
        return jsonReceipt(201, {});
      });
      assert.deepEqual(await levelsAtCommit(), ['remote_apply']);
    },
  );

  it(
    'a transaction that commits without a receipt is raised to synchronous too, in front of its COMMIT',
    options,
    async () => {
      const { rec, store, effects, levelsAtCommit } = await setUp('off');
      await store.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, ['plain']);
      });
      assert.deepEqual(await levelsAtCommit(), ['on']);
      assert.deepEqual(rec.take().slice(-1), [
        "client SELECT set_config('synchronous_commit', 'on', true) WHERE current_setting('synchronous_commit') = 'off'; COMMIT",
      ]);
    },
  );

  it(
    "'process' durability: the effect + receipt transaction commits asynchronously, with a receipt or without",
    options,
    async () => {
      const { ledger, store, effects, levelsAtCommit } = await setUp(undefined, 'process');
      await ledger.execute(req('k-p'), async (tx: PgTx) => {
        await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, ['a-receipt']);
        return jsonReceipt(201, {});
      });
      await store.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${effects} (id) VALUES ($1)`, ['b-plain']);
      });
      assert.deepEqual(await levelsAtCommit(), ['off', 'off']);
    },
  );

  it(
    'commitAlone (a step that wrote nothing): one statement, no BEGIN or COMMIT, at the store durability',
    options,
    async () => {
      for (const [session, durability, level] of [
        ['off', 'durable', 'on'],
        [undefined, 'process', 'off'],
      ] as const) {
        const { rec, store, effects, levelsAtCommit } = await setUp(session, durability);
        const insert = `INSERT INTO ${effects} (id) VALUES ($1) RETURNING id`;
        const rows = await store.capabilities.commitAlone!(insert, [`alone-${durability}`]);
        assert.deepEqual(
          rows.map((r) => r['id']),
          [`alone-${durability}`],
        );
        assert.deepEqual(await levelsAtCommit(), [level], durability);
        const sent = rec.take();
        assert.equal(sent.length, 1, sent.join('\n'));
        assert.match(sent[0]!, /^pool WITH alone AS \(INSERT INTO /);
      }
    },
  );

  it(
    'deferred commits, grouped or alone, commit at the store durability: raised to synchronous when durable, asynchronous at process',
    options,
    async () => {
      for (const [session, durability, level] of [
        ['off', 'durable', 'on'],
        [undefined, 'process', 'off'],
      ] as const) {
        const { ledger, effects, levelsAtCommit } = await setUp(session, durability);
        const deferred = (id: string) =>
          ledger.executeDeferred(req(`d-${durability}-${id}`), () => ({
            receipt: jsonReceipt(201, {}),
            writes: [{ sql: `INSERT INTO ${effects} (id) VALUES ($1)`, params: [id] }],
          }));
        // Three in one turn go as one transaction; one more goes alone.
        const grouped = await Promise.all(['a', 'b', 'c'].map(deferred));
        const alone = await deferred('d');
        assert.deepEqual(
          [...grouped, alone].map((r) => r.kind),
          Array(4).fill('executed'),
        );
        assert.deepEqual(await levelsAtCommit(), Array(4).fill(level), durability);
      }
    },
  );
});
