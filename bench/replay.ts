/**
 * bench/replay: how long replaying N dead letters takes, on the SQLite and PostgreSQL journals,
 * side by side: `journal.replay(filter)` (a batch of 500 per statement, one commit each) against
 * the loop a script around `oncely outbox retry KEY` would run (`journal.retry` per key, one
 * commit each). Variants interleaved, rounds repeated; each run reopens a fresh table of N
 * intents recorded and finished `refused` before its clock starts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createJournal, type JournalStore } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';

const WAYS = ['replay (batched)', 'retry per key'] as const;
type Way = (typeof WAYS)[number];

/** N intents recorded in one transaction, then finished `refused` without an attempt. */
async function seed(store: JournalStore<unknown>, n: number, bulk: BulkRecord): Promise<void> {
  await store.ready();
  await bulk(async (record) => {
    for (let i = 0; i < n; i++)
      await record({ key: `dead-${i}`, target: 'http://receiver.test/hooks', body: `{"i":${i}}` });
  });
  const now = Date.now();
  for (let left = n; left > 0; ) {
    const claimed = await store.claim('seed', now, 60_000, 500);
    left -= claimed.length;
    const final = { stopReason: 'fatal_status' as const, status: 400, body: null, detail: null };
    await store.settle(
      claimed.map((c) => ({
        key: c.intent.key,
        token: c.token,
        next: { state: 'refused', sawUnknown: false, final: { ...final, finishedAt: now } },
      })),
    );
  }
}

type Input = { key: string; target: string; body: string };
type BulkRecord = (
  fn: (record: (input: Input) => Promise<unknown>) => Promise<void>,
) => Promise<void>;

async function timeWay(way: Way, store: JournalStore<unknown>, n: number): Promise<number> {
  const journal = createJournal({ store });
  const started = performance.now();
  if (way === 'replay (batched)') {
    const { reopened } = await journal.replay({ state: 'refused' });
    if (reopened.length !== n) throw new Error(`bench/replay: ${reopened.length} of ${n} reopened`);
  } else {
    for (const intent of await journal.list({ state: 'refused', limit: n }))
      await journal.retry(intent.key);
  }
  const ms = performance.now() - started;
  if ((await journal.counts()).pending !== n) throw new Error('bench/replay: not all pending');
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const USAGE = 'usage: node dist/bench/replay.js [--intents N] [--rounds N] [--pg URL]';

async function main(): Promise<void> {
  const { values } = readBenchArgs('replay', USAGE, {
    options: {
      intents: { type: 'string' },
      rounds: { type: 'string' },
      pg: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const n = wholeArgOrExit('replay', 'intents', values.intents, 1000);
  const rounds = wholeArgOrExit('replay', 'rounds', values.rounds, 3);
  const pgUrl =
    typeof values.pg === 'string'
      ? values.pg
      : process.env['ONCELY_TEST_POSTGRES_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-replay-'));
  const schema = `oncely_bench_replay_${process.pid}`;
  const pool = new pg.Pool({ connectionString: pgUrl, max: 4 });
  let table = 0;
  const stores = {
    sqlite: () => {
      const file = join(dir, `j-${++table}.db`);
      const store = createSqliteJournalStore({ database: () => openSqliteDatabase(file) });
      const bulk: BulkRecord = async (fn) => {
        const db = openSqliteDatabase(file);
        db.exec('BEGIN IMMEDIATE');
        await fn((input) => createJournal({ store }).recordWithin(db, input));
        db.exec('COMMIT');
        db.close();
      };
      return { store: store as JournalStore<unknown>, bulk };
    },
    postgres: () => {
      const store = createPostgresJournalStore({ pool, schema, table: `intents_${++table}` });
      const bulk: BulkRecord = async (fn) => {
        const client = await pool.connect();
        await client.query('BEGIN');
        await fn((input) => createJournal({ store }).recordWithin(client, input));
        await client.query('COMMIT');
        client.release();
      };
      return { store: store as JournalStore<unknown>, bulk };
    },
  };
  console.log(`bench/replay: ${n} dead letters per run, ${rounds} round(s), ways interleaved`);
  try {
    for (const [name, open] of Object.entries(stores)) {
      const times: Record<Way, number[]> = { 'replay (batched)': [], 'retry per key': [] };
      for (let round = 0; round < rounds; round++)
        for (const way of round % 2 === 0 ? WAYS : [...WAYS].reverse()) {
          const { store, bulk } = open();
          await seed(store, n, bulk);
          times[way].push(await timeWay(way, store, n));
          await store.close();
        }
      for (const way of WAYS) {
        const xs = times[way];
        console.log(
          `${name.padEnd(9)} ${way.padEnd(17)} median ${median(xs).toFixed(0).padStart(6)} ms  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})  ${((n / median(xs)) * 1000).toFixed(0)} intents/s`,
        );
      }
      const ratio = median(times['retry per key']) / median(times['replay (batched)']);
      console.log(`${name.padEnd(9)} retry per key takes ${ratio.toFixed(1)}x as long as replay`);
    }
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
