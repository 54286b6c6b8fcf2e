/**
 * A fleet's retry budget, measured with real processes: 8 node processes (--processes) each send
 * N first tries (--n) through oncely's client to one downstream that answers every request 503,
 * retries allowed (GET, maxAttempts 3, backoff from 1 ms so the run is short). Three ways:
 *   (a) a RetryTokenBucket in every process (the AWS SDK's standard-mode quota: 500, retry 5);
 *   (b) one budget shared through a SQLite file (WAL), every process on its own connection;
 *   (c) one budget shared through PostgreSQL (--pg URL, default $ONCELY_TEST_POSTGRES_URL;
 *       none: skipped, saying so).
 * It prints total attempts (counted by the downstream) ÷ first tries for each, and checks that
 * the shared budgets stay at or under 1.1×: a bucket of 500 tokens at 5 a retry pays for 100
 * retries in all, where 8 buckets pay for 800. Exit 1 when a shared figure is over 1.1×.
 * Then the cost of a shared budget's round trips (bench/fleet-budget-cost.ts).
 *
 *   npm run build && node dist/bench/fleet-budget.js [--n 200] [--processes 8] [--pg URL]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient, RetryTokenBucket, type RetryBudget } from 'oncely';
import { createPostgresRetryBudget } from 'oncely/stores/postgres';
import { createSqliteRetryBudget, openSqliteDatabase } from 'oncely/stores/sqlite';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { measureRoundTrips } from './fleet-budget-cost.js';

const CHILD_ENV = 'ONCELY_FLEET_BUDGET_CHILD';
const BOUND = 1.1;
type Mode = 'process' | 'sqlite' | 'postgres';
const MODE_LABELS: { readonly [m in Mode]: string } = {
  process: '(a) a bucket per process',
  sqlite: '(b) shared, SQLite',
  postgres: '(c) shared, PostgreSQL',
};

interface ChildConfig {
  readonly mode: Mode;
  readonly target: string;
  readonly n: number;
  readonly concurrency: number;
  readonly name: string;
  readonly file: string;
  readonly pgUrl: string | undefined;
}

interface ChildResult {
  readonly firstTries: number;
  readonly attempts: number;
  readonly budgetErrors: number;
}

/** A budget error refuses a retry (fail closed); the run says why, once per process. */
let told = false;
const onError = (error: unknown): void => {
  if (told) return;
  told = true;
  console.error(`fleet-budget: process ${process.pid}: ${String(error)}`);
};

function openBudget(config: ChildConfig): RetryBudget & { close?(): Promise<void> } {
  if (config.mode === 'process') return new RetryTokenBucket();
  if (config.mode === 'sqlite')
    return createSqliteRetryBudget({
      database: () => openSqliteDatabase(config.file),
      name: config.name,
      onError,
    });
  return createPostgresRetryBudget({
    pool: () => new pg.Pool({ connectionString: config.pgUrl, max: 2 }),
    name: config.name,
    onError,
  });
}

/** One process of the fleet: ready, wait for go, send its first tries, say what it sent. */
async function child(config: ChildConfig): Promise<void> {
  const budget = openBudget(config);
  if ('ready' in budget && typeof budget.ready === 'function') await budget.ready();
  const client = createClient({
    retryBudget: budget,
    baseDelayMs: 1,
    maxDelayMs: 5,
    throwOn: 'never',
  });
  await new Promise<void>((resolve) => {
    process.once('message', () => resolve());
    process.send!('ready');
  });
  let next = 0;
  let attempts = 0;
  const worker = async (): Promise<void> => {
    while (next < config.n) {
      next++;
      const result = await client.request(config.target);
      await result.response?.arrayBuffer();
      attempts += result.report.attemptCount;
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, worker));
  const budgetErrors = 'errors' in budget ? Number(budget.errors) : 0;
  await budget.close?.();
  const result: ChildResult = { firstTries: config.n, attempts, budgetErrors };
  process.send!(result, () => process.disconnect());
}

async function runFleet(
  base: Omit<ChildConfig, 'mode' | 'name'>,
  mode: Mode,
  processes: number,
  served: () => number,
): Promise<{ firstTries: number; attempts: number; reported: number; errors: number }> {
  const config: ChildConfig = { ...base, mode, name: `bench-fleet-${process.pid}-${mode}` };
  const self = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = [];
  const results: Promise<ChildResult>[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < processes; i++) {
    const c = fork(self, [], { env: { ...process.env, [CHILD_ENV]: JSON.stringify(config) } });
    children.push(c);
    ready.push(new Promise((resolve) => c.once('message', () => resolve())));
    results.push(
      new Promise((resolve, reject) => {
        c.once(
          'exit',
          (code) => code !== 0 && reject(new Error(`a ${mode} process exited ${code}`)),
        );
        void ready[i]!.then(() => c.once('message', (m) => resolve(m as ChildResult)));
      }),
    );
  }
  await Promise.all(ready);
  const before = served();
  for (const c of children) c.send('go');
  const done = await Promise.all(results);
  return {
    firstTries: done.reduce((a, r) => a + r.firstTries, 0),
    attempts: served() - before,
    reported: done.reduce((a, r) => a + r.attempts, 0),
    errors: done.reduce((a, r) => a + r.budgetErrors, 0),
  };
}

const USAGE = `usage: node dist/bench/fleet-budget.js [--n 200] [--processes 8] [--concurrency 4] [--pg URL]
  --n N            first tries per process (default 200)
  --processes P    processes in the fleet (default 8)
  --concurrency C  requests in flight per process (default 4)
  --pg URL         PostgreSQL for (c) (default $ONCELY_TEST_POSTGRES_URL; none: skipped)
  --rounds R       rounds of the round-trip cost section (default 7; 0 skips it)`;

async function main(): Promise<void> {
  const { values } = readBenchArgs('fleet-budget', USAGE, {
    options: {
      n: { type: 'string' },
      processes: { type: 'string' },
      concurrency: { type: 'string' },
      pg: { type: 'string' },
      rounds: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const n = wholeArgOrExit('fleet-budget', 'n', values.n, 200);
  const processes = wholeArgOrExit('fleet-budget', 'processes', values.processes, 8);
  const concurrency = wholeArgOrExit('fleet-budget', 'concurrency', values.concurrency, 4);
  const rounds = wholeArgOrExit('fleet-budget', 'rounds', values.rounds, 7, 0);
  const pgUrl = values.pg ?? (process.env['ONCELY_TEST_POSTGRES_URL'] || undefined);
  let count = 0;
  const server = createServer((_req, res) => {
    count++;
    res.writeHead(503, { 'content-type': 'text/plain' }).end('down');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const dir = mkdtempSync(join(tmpdir(), 'oncely-fleet-budget-'));
  const base = { target, n, concurrency, file: join(dir, 'budget.db'), pgUrl };
  console.log(
    `fleet-budget: ${processes} processes × ${n} first tries, downstream 503 always, maxAttempts 3, budget 500 tokens at 5 a retry`,
  );
  console.log(
    `\n  ${'budget'.padEnd(28)}${'first tries'.padStart(12)}${'attempts'.padStart(10)}${'ratio'.padStart(8)}`,
  );
  const ratios: { mode: Mode; ratio: number }[] = [];
  try {
    for (const mode of ['process', 'sqlite', 'postgres'] as const) {
      if (mode === 'postgres' && pgUrl === undefined) {
        console.log(
          `  ${MODE_LABELS[mode].padEnd(28)}skipped: no --pg URL or $ONCELY_TEST_POSTGRES_URL`,
        );
        continue;
      }
      const r = await runFleet(base, mode, processes, () => count);
      const ratio = r.attempts / r.firstTries;
      ratios.push({ mode, ratio });
      const note = r.reported === r.attempts ? '' : ` (clients counted ${r.reported})`;
      const errors = r.errors > 0 ? ` budget errors ${r.errors}` : '';
      console.log(
        `  ${MODE_LABELS[mode].padEnd(28)}${String(r.firstTries).padStart(12)}${String(r.attempts).padStart(10)}${`${ratio.toFixed(3)}×`.padStart(8)}${note}${errors}`,
      );
    }
  } finally {
    server.close();
    if (pgUrl !== undefined) await deleteBenchRows(pgUrl);
  }
  const perProcess = ratios.find((r) => r.mode === 'process')!.ratio;
  const over = ratios.filter((r) => r.mode !== 'process' && r.ratio > BOUND);
  console.log(
    `\nShared total attempts ≤ ${BOUND} × first tries: ${over.length === 0 ? 'yes' : `NO (${over.map((r) => r.mode).join(', ')})`}; a bucket per process: ${perProcess.toFixed(3)}×`,
  );
  if (rounds > 0) await measureRoundTrips({ file: join(dir, 'cost.db'), pgUrl, rounds });
  rmSync(dir, { recursive: true, force: true });
  if (over.length > 0) process.exitCode = 1;
}

async function deleteBenchRows(pgUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  try {
    await client.connect();
    await client.query(`DELETE FROM oncely_retry_budgets WHERE name LIKE 'bench-fleet-%'`);
  } catch {
    // Nothing to delete (the table was never made): nothing to do.
  } finally {
    await client.end().catch(() => undefined);
  }
}

const childConfig = process.env[CHILD_ENV];
if (childConfig !== undefined) await child(JSON.parse(childConfig) as ChildConfig);
else await main();
