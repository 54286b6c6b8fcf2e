/**
 * bench/steps: what recovery points cost. A route calling three services, with and without
 * steps, against the same route plus one extra claim per call (the target: a step costs at most
 * 1.5x an extra claim). CPU per request: this process (every thread) plus, on PostgreSQL, the
 * backends serving it. The three forms run interleaved, round after round, in one process;
 * medians, spread and ratios are printed.
 *
 *   node dist/bench/steps.js [--requests 2000] [--rounds 5] [--concurrency 16] [--stores sqlite,postgres] [--durability durable|process] [--pg URL]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { LedgerStore, StepStore } from 'oncely';
import { createPostgresStore, createSqlStepStore as pgSteps } from 'oncely/stores/postgres';
import { createSqliteStore, createSqlStepStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { SenderCpu } from './outbox-cpu.js';
import { benchRoute, ROUTE_FORMS, type RouteForm } from './steps-route.js';

const USAGE =
  'usage: node dist/bench/steps.js [--requests 2000] [--rounds 5] [--concurrency 16] [--stores sqlite,postgres] [--durability durable|process] [--pg URL]';
const { values } = readBenchArgs('steps', USAGE, {
  options: {
    requests: { type: 'string' },
    rounds: { type: 'string' },
    concurrency: { type: 'string' },
    stores: { type: 'string' },
    pg: { type: 'string' },
    durability: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const requests = wholeArgOrExit('steps', 'requests', values.requests, 2000);
const rounds = wholeArgOrExit('steps', 'rounds', values.rounds, 5);
const concurrency = wholeArgOrExit('steps', 'concurrency', values.concurrency, 16);
const stores = String(values.stores ?? 'sqlite,postgres').split(',');
const durability = values.durability === 'process' ? 'process' : 'durable';
const pgUrl =
  values.pg ?? process.env['ONCELY_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Backend {
  readonly name: string;
  readonly store: LedgerStore<unknown>;
  readonly steps: StepStore<unknown>;
  readonly cpu: SenderCpu;
  close(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-steps-'));
  const database = openSqliteDatabase(join(dir, 'steps.db'));
  database.exec('CREATE TABLE orders (id TEXT PRIMARY KEY, note TEXT NOT NULL)');
  const store = createSqliteStore({ database, durability }) as LedgerStore<unknown>;
  return {
    name: `sqlite (${durability})`,
    store,
    steps: createSqlStepStore(store),
    cpu: new SenderCpu(process.pid),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresBackend(): Promise<Backend> {
  const schema = `oncely_bench_steps_${process.pid}`;
  const applicationName = `oncely-bench-steps-${process.pid}`;
  const pool = new pg.Pool({ connectionString: pgUrl, max: 16, application_name: applicationName });
  const monitor = new pg.Client({ connectionString: pgUrl });
  await monitor.connect();
  const store = createPostgresStore({ pool, schema, durability }) as LedgerStore<unknown>;
  await store.ready();
  await pool.query(`CREATE TABLE ${schema}.orders (id TEXT PRIMARY KEY, note TEXT NOT NULL)`);
  return {
    name: `postgres (${durability})`,
    store,
    steps: pgSteps(store, { table: `${schema}.steps` }),
    cpu: new SenderCpu(process.pid, monitor, applicationName),
    close: async () => {
      await store.close();
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await pool.end();
      await monitor.end();
    },
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (us: number): string => us.toFixed(0).padStart(6);

async function measure(backend: Backend): Promise<void> {
  const table = backend.name.startsWith('postgres')
    ? `oncely_bench_steps_${process.pid}.orders`
    : 'orders';
  const route = benchRoute(backend.store, backend.steps, table);
  await route.run('steps', 'warm-steps', 200, concurrency); // sets up the steps' table, warms up
  await route.run('claims', 'warm-claims', 200, concurrency);
  const perRequest = new Map<RouteForm, number[]>(ROUTE_FORMS.map((f) => [f, []]));
  const dbShare = new Map<RouteForm, number[]>(ROUTE_FORMS.map((f) => [f, []]));
  for (let round = 0; round < rounds; round++) {
    // A rotated order each round, so no form always runs first or last.
    const order = ROUTE_FORMS.map((_, i) => ROUTE_FORMS[(i + round) % ROUTE_FORMS.length]!);
    for (const form of order) {
      const window = await backend.cpu.open();
      await route.run(form, `${form}-${round}`, requests, concurrency);
      const { workerUs, databaseUs } = await window.close();
      perRequest.get(form)!.push((workerUs + databaseUs) / requests);
      dbShare.get(form)!.push(databaseUs / requests);
    }
  }
  console.log(
    `\n${backend.name}: CPU µs per request (app + database), ${rounds} rounds of ${requests}, ${concurrency} at a time`,
  );
  console.log('form      median   min    max  (of it, database)');
  for (const form of ROUTE_FORMS) {
    const xs = perRequest.get(form)!;
    console.log(
      `${form.padEnd(8)} ${fmt(median(xs))} ${fmt(Math.min(...xs))} ${fmt(Math.max(...xs))} ${fmt(median(dbShare.get(form)!))}`,
    );
  }
  const plain = median(perRequest.get('plain')!);
  const stepCost = (median(perRequest.get('steps')!) - plain) / 3;
  const claimCost = (median(perRequest.get('claims')!) - plain) / 3;
  console.log(
    `one step costs ${stepCost.toFixed(0)} µs, one extra claim ${claimCost.toFixed(0)} µs: ` +
      `${(stepCost / claimCost).toFixed(2)}x (target <= 1.5x); steps route / plain route ${(median(perRequest.get('steps')!) / plain).toFixed(2)}x`,
  );
}

for (const name of stores) {
  const backend = name === 'postgres' ? await postgresBackend() : await sqliteBackend();
  try {
    await measure(backend);
  } finally {
    await backend.close();
  }
}
