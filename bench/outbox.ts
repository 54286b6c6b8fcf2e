/**
 * bench/outbox: intents delivered per second through oncely's outbox (SQLite and PostgreSQL
 * journals) against a local receiver, side by side with the same deliveries through pg-boss
 * (jobs in PostgreSQL) with p-retry around each fetch, in one process run, interleaved, repeated.
 *
 * Each run records N intents one by one (as an application would, one commit each), then
 * delivers them all: 32 claimed and sent together. The time is from the first record to the last
 * delivery. The receiver answers 200 at once, so the numbers are the queue's own cost.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import PgBoss from 'pg-boss';
import pRetry from 'p-retry';
import { createJournal, createOutboxWorker, type JournalStore } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { readBenchArgs } from './bench-args.js';

const BATCH = 32;
const VARIANTS = ['oncely-sqlite', 'oncely-postgres', 'pg-boss+p-retry'] as const;
type Variant = (typeof VARIANTS)[number];
const DURABILITY: Record<Variant, string> = {
  'oncely-sqlite':
    'SQLite file, WAL, synchronous = FULL: every record, attempt start and settlement fsynced',
  'oncely-postgres':
    'PostgreSQL, synchronous_commit on: every record, claim, attempt start and settlement flushed',
  'pg-boss+p-retry':
    'PostgreSQL, synchronous_commit on: every send and completion flushed (pg-boss 10, p-retry 7)',
};

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`),
    ),
  );
}

async function runOncely(
  store: JournalStore<unknown>,
  target: string,
  n: number,
  round: number,
): Promise<{ recordMs: number; totalMs: number }> {
  const journal = createJournal({ store });
  await store.ready();
  const started = performance.now();
  for (let i = 0; i < n; i++)
    await journal.record({
      key: `r${round}-${i}`,
      target,
      body: JSON.stringify({ round, i }),
      headers: { 'content-type': 'application/json' },
    });
  const recordMs = performance.now() - started;
  const counts = await createOutboxWorker({ store, batchSize: BATCH }).resume();
  if (counts.delivered !== n)
    throw new Error(`bench/outbox: ${counts.delivered} of ${n} delivered`);
  return { recordMs, totalMs: performance.now() - started };
}

async function runPgBoss(
  boss: PgBoss,
  target: string,
  n: number,
  round: number,
): Promise<{ recordMs: number; totalMs: number }> {
  const queue = `deliveries_${round}`;
  await boss.createQueue(queue);
  const started = performance.now();
  for (let i = 0; i < n; i++)
    await boss.send(
      queue,
      { key: `r${round}-${i}`, body: JSON.stringify({ round, i }) },
      { retryLimit: 0 },
    );
  const recordMs = performance.now() - started;
  let delivered = 0;
  let workerId = '';
  const done = new Promise<void>((resolve) => {
    void boss
      .work<{ key: string; body: string }>(
        queue,
        { batchSize: BATCH, pollingIntervalSeconds: 0.5 },
        async (jobs) => {
          await Promise.all(
            jobs.map((job) =>
              pRetry(
                async () => {
                  const response = await fetch(target, {
                    method: 'POST',
                    body: job.data.body,
                    headers: {
                      'content-type': 'application/json',
                      'idempotency-key': job.data.key,
                    },
                  });
                  await response.arrayBuffer();
                  if (!response.ok) throw new Error(`status ${response.status}`);
                },
                { retries: 2, minTimeout: 100 },
              ),
            ),
          );
          delivered += jobs.length;
          if (delivered >= n) resolve();
          // A backlog: look again at once instead of after the polling interval (pg-boss's own notifyWorker).
          else boss.notifyWorker(workerId);
        },
      )
      .then((id) => (workerId = id));
  });
  await done;
  const totalMs = performance.now() - started;
  await boss.offWork(queue);
  return { recordMs, totalMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const USAGE = 'usage: node dist/bench/outbox.js [--intents N] [--rounds N] [--pg URL]';

async function main(): Promise<void> {
  const { values } = readBenchArgs('outbox', USAGE, {
    options: {
      intents: { type: 'string' },
      rounds: { type: 'string' },
      pg: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const n = Number(values.intents ?? 300);
  const rounds = Number(values.rounds ?? 3);
  if (!Number.isSafeInteger(n) || n < 1 || !Number.isSafeInteger(rounds) || rounds < 1)
    throw new Error('bench/outbox: --intents and --rounds must be whole numbers >= 1');
  const pgUrl =
    typeof values.pg === 'string'
      ? values.pg
      : process.env['ONCELY_TEST_POSTGRES_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `oncely_bench_outbox_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-outbox-'));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    );
  });
  const target = await listen(server);
  const pool = new pg.Pool({ connectionString: pgUrl, max: 10 });
  const boss = new PgBoss({
    connectionString: pgUrl,
    schema: `${schema}_boss`,
    max: 10,
    supervise: false,
    schedule: false,
  });
  boss.on('error', (error) => console.error('pg-boss:', error));
  await boss.start();
  const results = new Map<Variant, { record: number[]; total: number[] }>(
    VARIANTS.map((v) => [v, { record: [], total: [] }]),
  );
  console.log(
    `bench/outbox: ${n} intents per run, ${rounds} round(s), variants interleaved; receiver answers 200 at once (same process); batches of ${BATCH}`,
  );
  try {
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round so no variant always runs first on a warm or cold machine.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
      for (const variant of order) {
        let run: { recordMs: number; totalMs: number };
        if (variant === 'oncely-sqlite') {
          const store = createSqliteJournalStore({
            database: () => openSqliteDatabase(join(dir, `journal-${round}.db`)),
          });
          run = await runOncely(store as JournalStore<unknown>, target, n, round);
          await store.close();
        } else if (variant === 'oncely-postgres') {
          const store = createPostgresJournalStore({ pool, schema, table: `intents_${round}` });
          run = await runOncely(store as JournalStore<unknown>, target, n, round);
          await store.close();
        } else {
          run = await runPgBoss(boss, target, n, round);
        }
        results.get(variant)!.record.push(run.recordMs);
        results.get(variant)!.total.push(run.totalMs);
        console.log(
          `  round ${round + 1} ${variant.padEnd(16)} ${((n * 1000) / run.totalMs).toFixed(0).padStart(6)} intents/s end to end (record ${run.recordMs.toFixed(0)} ms, all ${run.totalMs.toFixed(0)} ms)`,
        );
      }
    }
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}_boss" CASCADE`).catch(() => undefined);
    await pool.end();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const rate = (ms: number): number => (n * 1000) / ms;
  const deliverMs = (v: Variant): number[] =>
    results.get(v)!.total.map((t, i) => t - results.get(v)!.record[i]!);
  console.log(
    `\n${'variant'.padEnd(16)}  ${'intents/s'.padStart(9)}  ${'spread'.padStart(11)}  ${'record/s'.padStart(8)}  ${'deliver/s'.padStart(9)}  durability`,
  );
  for (const variant of VARIANTS) {
    const { record, total } = results.get(variant)!;
    const spread = `${rate(Math.max(...total)).toFixed(0)}–${rate(Math.min(...total)).toFixed(0)}`;
    console.log(
      `${variant.padEnd(16)}  ${rate(median(total)).toFixed(0).padStart(9)}  ${spread.padStart(11)}  ${rate(median(record)).toFixed(0).padStart(8)}  ${rate(
        median(deliverMs(variant)),
      )
        .toFixed(0)
        .padStart(9)}  ${DURABILITY[variant]}`,
    );
  }
  const baseline: Variant = 'pg-boss+p-retry';
  for (const variant of ['oncely-sqlite', 'oncely-postgres'] as const) {
    const endToEnd =
      rate(median(results.get(variant)!.total)) / rate(median(results.get(baseline)!.total));
    const delivering = rate(median(deliverMs(variant))) / rate(median(deliverMs(baseline)));
    console.log(
      `${variant} / ${baseline}: ${endToEnd.toFixed(2)}× end to end, ${delivering.toFixed(2)}× delivering (medians)`,
    );
  }
  console.log(
    'intents/s: N / (first record to last delivery); spread: slowest–fastest round; record/s: recording alone; deliver/s: the rest.',
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exitCode = 1;
});
