// The retention sweep in bounded steps, on a manual VirtualClock: the pauses between steps take
// no real time, and the test decides when the next step may run. Every store runs the same story.
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pg } from './postgres-env.js';
import {
  createLedger,
  jsonReceipt,
  type LedgerStore,
  type SweepResult,
} from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { createPostgresStore } from '#oncely/stores/postgres/index.js';
import { createSqliteStore, openSqliteDatabase } from '#oncely/stores/sqlite/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { bindStore } from '../support/bind-store.js';
import { describePostgres, dropSchema, uniqueSchemaName } from './postgres-env.js';
import { tempDir } from '../support/temp-dir.js';

const START_AT = 1_700_000_000_000;
const RETENTION_MS = 3_600_000;
const TOMBSTONE_MS = 7_200_000;
const KEYS = 45;
const BATCH = 10;
const PAUSE_MS = 50;

const dir = tempDir('oncely-sweep-');

type MakeStore = () => Promise<{ store: LedgerStore<unknown>; close(): Promise<void> }>;

/** `lateMs`: how long after its end a tombstone may wait to be deleted (a time partition's span). */
function sweepStory(
  name: string,
  makeStore: MakeStore,
  options: { skip?: string; lateMs?: number } = {},
): void {
  describe(`bounded sweep: ${name}`, options, () => {
    async function setUp() {
      const made = await makeStore();
      const steps: SweepResult[] = [];
      // The store as the ledger sees it, with every bounded step recorded.
      const store: LedgerStore<unknown> = {
        ...bindStore(made.store),
        sweep: async (nowMs, tombstoneMs, limit) => {
          const step = await made.store.sweep(nowMs, tombstoneMs, limit);
          steps.push(step);
          return step;
        },
      };
      const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
      const ledger = createLedger({
        store,
        clock,
        retentionMs: RETENTION_MS,
        tombstoneMs: TOMBSTONE_MS,
        sweepBatchRows: BATCH,
        sweepPauseMs: PAUSE_MS,
      });
      const write = (key: string) =>
        ledger.execute({ scope: 'alice', key, fingerprint: 'fp' }, () => jsonReceipt(201, { key }));
      for (let i = 0; i < KEYS; i++) assert.equal((await write(`old-${i}`)).kind, 'executed');
      await clock.advance(RETENTION_MS);
      /** Lets the sweep run until it is asleep between two steps (or done): a condition, not a timer. */
      const settle = async (): Promise<void> => {
        for (
          let i = 0;
          i < 100_000 && clock.pendingCount === 0 && ledger.sweepProgress().running;
          i++
        )
          await clock.advance(0);
      };
      /** Runs the sweep to its end, moving time only while it is asleep (a step takes no virtual time). */
      const drain = async (): Promise<void> => {
        for (await settle(); ledger.sweepProgress().running; await settle())
          await clock.advance(PAUSE_MS);
      };
      return { made, steps, clock, ledger, write, settle, drain };
    }

    it('runs as several bounded steps, and a write issued between two of them proceeds at once', async () => {
      const { made, steps, clock, ledger, write, settle, drain } = await setUp();
      try {
        const sweeping = ledger.purgeExpired();
        await settle();
        assert.deepEqual(
          steps,
          [{ tombstoned: BATCH, deleted: 0 }],
          'one step of BATCH rows, then a pause',
        );
        assert.equal(ledger.sweepProgress().running, true);
        assert.equal(ledger.sweepProgress().rowsLeft, KEYS - BATCH);

        // Between two steps the store is free: a new key runs, a live key replays, now.
        assert.equal((await write('new-between-steps')).kind, 'executed');
        assert.equal(steps.length, 1, 'the write did not wait for the sweep to finish');
        assert.equal(ledger.sweepProgress().running, true);

        await drain();
        assert.deepEqual(await sweeping, { tombstoned: KEYS, deleted: 0 });
        assert.equal(steps.length, Math.ceil(KEYS / BATCH));
        assert.ok(
          steps.every((s) => s.tombstoned <= BATCH),
          JSON.stringify(steps),
        );
        assert.deepEqual(
          clock.sleeps,
          Array(steps.length - 1).fill(PAUSE_MS),
          'a pause between every two steps',
        );
        assert.equal(ledger.sweepProgress().rowsLeft, 0);
        assert.equal(
          (await ledger.lookup('alice', 'old-0')).kind,
          'expired',
          'expired, not never seen',
        );
        assert.equal((await ledger.lookup('alice', 'new-between-steps')).kind, 'found');
      } finally {
        await made.close();
      }
    });

    it('an interrupted sweep resumes where it stopped: every row is handled once', async () => {
      const { made, steps, clock, ledger, settle, drain } = await setUp();
      try {
        const stop = new AbortController();
        const first = ledger.purgeExpired(stop.signal);
        await settle();
        await clock.advance(PAUSE_MS);
        await settle();
        stop.abort(); // while asleep after its second step
        assert.deepEqual(await first, { tombstoned: 2 * BATCH, deleted: 0 });
        const stopped = ledger.sweepProgress();
        assert.equal(stopped.interrupted, true);
        assert.equal(stopped.rowsLeft, KEYS - 2 * BATCH);
        assert.equal(
          await made.store.backlog(clock.now()),
          KEYS - 2 * BATCH,
          'the rows left are what the store still holds due',
        );

        const resumed = ledger.purgeExpired();
        await drain();
        assert.deepEqual(await resumed, { tombstoned: KEYS - 2 * BATCH, deleted: 0 });
        assert.equal(ledger.sweepProgress().interrupted, false);
        assert.equal(
          steps.reduce((n, s) => n + s.tombstoned, 0),
          KEYS,
          'each row once, none twice',
        );
        for (let i = 0; i < KEYS; i++)
          assert.equal((await made.store.get('alice', `old-${i}`))?.state, 'expired');

        // The tombstones' own end: deleted, again in bounded steps (or dropped with their partition).
        await clock.advance(TOMBSTONE_MS + (options.lateMs ?? 0));
        const purge = ledger.purgeExpired();
        await drain();
        assert.equal((await purge).deleted, KEYS);
        assert.deepEqual(await ledger.lookup('alice', 'old-0'), { kind: 'never_seen' });
      } finally {
        await made.close();
      }
    });
  });
}

describe('bounded sweep: steps sized to a time budget', () => {
  it('a step slower than sweepStepMs makes the next one proportionally smaller; fast steps grow back', async () => {
    const clock = new VirtualClock({ startAt: START_AT, autoAdvance: false });
    const store = createMemoryStore();
    const limits: number[] = [];
    let msPerRow = 1; // a slow machine: 50 rows take 50 ms
    const timed: LedgerStore<unknown> = {
      ...bindStore(store as LedgerStore<unknown>),
      sweep: async (nowMs, tombstoneMs, limit = Infinity) => {
        limits.push(limit);
        const step = await store.sweep(nowMs, tombstoneMs, limit);
        await clock.advance(Math.round(limit * msPerRow)); // the step's own length, on the clock
        if (limits.length === 2) msPerRow = 0.01; // the machine is quiet again
        return step;
      },
    };
    const ledger = createLedger({
      store: timed,
      clock,
      retentionMs: RETENTION_MS,
      sweepBatchRows: 50,
      sweepStepMs: 10,
      sweepPauseMs: 0,
    });
    for (let i = 0; i < 200; i++)
      await ledger.execute({ scope: 'alice', key: `k-${i}`, fingerprint: 'fp' }, () =>
        jsonReceipt(201, {}),
      );
    await clock.advance(RETENTION_MS);
    const sweeping = ledger.purgeExpired();
    for (let i = 0; i < 100_000 && ledger.sweepProgress().running; i++) await clock.advance(1);
    assert.equal((await sweeping).tombstoned, 200);
    // 50 rows took 50 ms: the next step takes 10 (10 ms), and stays there while it is slow;
    // once steps take under half the budget, they double back up to sweepBatchRows.
    assert.deepEqual(limits, [50, 10, 10, 20, 40, 50, 50]);
    await store.close();
  });
});

sweepStory('memory', async () => {
  const store = createMemoryStore();
  return { store: store as LedgerStore<unknown>, close: () => store.close() };
});

let files = 0;
sweepStory('sqlite', async () => {
  // The factory opens the writer and the read connection: both on one file.
  const file = join(dir, `sweep-${++files}.db`);
  const store = createSqliteStore({ database: () => openSqliteDatabase(file) });
  return { store: store as LedgerStore<unknown>, close: () => store.close() };
});

await describePostgres('the bounded sweep', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_sweep');
  const pool = url ? new pg.Pool({ connectionString: url, max: 4 }) : undefined;
  after(async () => {
    if (!pool) return;
    await pool.end();
    await dropSchema(url, schema);
  });
  let tables = 0;
  sweepStory(
    'postgres',
    async () => {
      const store = createPostgresStore({
        pool: pool!,
        schema,
        table: `sweep_${++tables}`,
        // One-minute receipt partitions: the old keys' partition has ended when retention has.
        receiptPartitionMs: 60_000,
        tombstonePartitionMs: 3_600_000,
      });
      return { store: store as LedgerStore<unknown>, close: () => store.close() };
    },
    { ...options, lateMs: 3_600_000 },
  );
});
