/**
 * bench/fifo: FIFO per ordering key with real processes. K keys × N intents are recorded in
 * record order (n = 1 of every key, then n = 2 …), then W worker processes (bench/fifo-worker)
 * deliver them from one journal, on SQLite and on PostgreSQL, to a receiver in this process that
 * fails a seeded 30 % of arrivals with 503 and drops the connection after the work for 10 % of
 * the others (bench/fifo-receiver). It prints, per journal: keys, intents done, keys whose
 * intents arrived in order, violations (an intent arriving before its predecessor's work was
 * done), arrivals, and the time from the workers' start to the last one's exit.
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createJournal, type JournalStore } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { seededRandom } from 'oncely';
import { readBenchArgs } from './bench-args.js';
import { createFifoReceiver, type FifoReport } from './fifo-receiver.js';

const USAGE =
  'usage: node dist/bench/fifo.js [--keys 500] [--per-key 10] [--workers 3] [--journals sqlite,postgres] [--pg URL]';

interface Setup {
  readonly keys: number;
  readonly perKey: number;
  readonly workers: number;
}

/** Records every intent, starts the workers, waits for them: the receiver's report and the time. */
async function runOn(
  journalName: string,
  store: JournalStore<unknown>,
  args: (owner: string) => string[],
  setup: Setup,
  seed: number,
): Promise<{ report: FifoReport; ms: number; settled: number[] }> {
  const receiver = createFifoReceiver({ random: seededRandom(seed), perKey: setup.perKey });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = receiver.receive(Buffer.concat(chunks).toString());
      if (answer === 'swallowed') {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer === 'ok' ? 200 : 503).end(answer === 'ok' ? '{"ok":true}' : 'busy');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
  const journal = createJournal({ store });
  await store.ready();
  for (let n = 1; n <= setup.perKey; n++)
    await Promise.all(
      Array.from({ length: setup.keys }, (_, k) =>
        journal.record({
          key: `k${k}-${n}`,
          target,
          body: JSON.stringify({ k: `k${k}`, n }),
          orderingKey: `k${k}`,
          maxAttempts: 30,
          baseDelayMs: 10,
          maxDelayMs: 200,
          attemptTimeoutMs: 5000,
        }),
      ),
    );
  await store.close();
  const started = performance.now();
  const worker = fileURLToPath(new URL('./fifo-worker.js', import.meta.url));
  const exits = Array.from({ length: setup.workers }, (_, w) => {
    const child = fork(worker, args(`${journalName}-w${w + 1}`));
    let settled = 0;
    child.on('message', (message: { settled: number }) => (settled = message.settled));
    return new Promise<number>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0
          ? resolve(settled)
          : reject(new Error(`bench/fifo: worker ${w + 1} exited ${code}`)),
      ),
    );
  });
  const settled = await Promise.all(exits);
  const ms = performance.now() - started;
  server.closeAllConnections();
  server.close();
  return { report: receiver.report(), ms, settled };
}

async function main(): Promise<void> {
  const { values } = readBenchArgs('fifo', USAGE, {
    options: {
      keys: { type: 'string' },
      'per-key': { type: 'string' },
      workers: { type: 'string' },
      journals: { type: 'string' },
      pg: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const setup: Setup = {
    keys: Number(values.keys ?? 500),
    perKey: Number(values['per-key'] ?? 10),
    workers: Number(values.workers ?? 3),
  };
  if (Object.values(setup).some((x) => !Number.isSafeInteger(x) || x < 1))
    throw new Error('bench/fifo: --keys, --per-key and --workers must be whole numbers >= 1');
  const journals = String(values.journals ?? 'sqlite,postgres').split(',');
  const pgUrl =
    typeof values.pg === 'string'
      ? values.pg
      : process.env['ONCELY_TEST_POSTGRES_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-fifo-'));
  const schema = `oncely_bench_fifo_${process.pid}`;
  const pool = journals.includes('postgres')
    ? new pg.Pool({ connectionString: pgUrl, max: 10 })
    : undefined;
  console.log(
    `bench/fifo: ${setup.keys} keys × ${setup.perKey} intents, ${setup.workers} worker processes; receiver fails 30 % with 503, drops 10 % of answers after the work`,
  );
  console.log(
    `${'journal'.padEnd(9)} ${'keys'.padStart(5)} ${'intents'.padStart(8)} ${'in order'.padStart(9)} ${'violations'.padStart(11)} ${'arrivals'.padStart(9)} ${'time'.padStart(8)}  settled by each worker`,
  );
  try {
    for (const [i, journalName] of journals.entries()) {
      const file = join(dir, 'journal.db');
      const { report, ms, settled } =
        journalName === 'postgres'
          ? await runOn(
              journalName,
              createPostgresJournalStore({ pool: pool!, schema }) as JournalStore<unknown>,
              (owner) => ['postgres', pgUrl, schema, owner],
              setup,
              i + 1,
            )
          : await runOn(
              journalName,
              createSqliteJournalStore({
                database: () => openSqliteDatabase(file),
              }) as JournalStore<unknown>,
              (owner) => ['sqlite', file, '', owner],
              setup,
              i + 1,
            );
      console.log(
        `${journalName.padEnd(9)} ${String(report.keys).padStart(5)} ${String(report.intents).padStart(8)} ${String(report.inOrder).padStart(9)} ${String(report.violations).padStart(11)} ${String(report.arrivals).padStart(9)} ${`${(ms / 1000).toFixed(1)} s`.padStart(8)}  ${settled.join(' / ')}`,
      );
      if (report.violations > 0 || report.inOrder !== setup.keys) process.exitCode = 1;
    }
  } finally {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool?.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.stack : String(error));
  process.exitCode = 1;
});
