/**
 * The PostgreSQL store's deferred commit measured store-side, with no HTTP and no middleware:
 * `--connections` concurrent loops, each committing one request after another, against the floor
 * bench/ledger uses (the same INSERT in autocommit on a pool of its own). Variants, interleaved
 * round by round:
 *   floor    the effect alone: one INSERT in autocommit, synchronous_commit on;
 *   grouped  oncely's `store.capabilities.deferredCommit` at its default deferredGroups: concurrent requests
 *            share BEGIN, the claim function's one call for all their rows, and COMMIT;
 *   alone    the same with deferredGroups { maxRequests: 1 }: one transaction per request.
 * For each: median req/s and spread, this process's CPU per request (the driver and the store),
 * the whole machine's CPU per request (this process and PostgreSQL's backends, from /proc/stat),
 * and how busy the machine was. A row that needs less CPU per request than the floor and still
 * runs slower is bound by latency, not CPU: its requests wait on one another, not on a core.
 *
 *   npm run build && node dist/bench/pg-group-commit.js [--pg URL] [--seconds 2] [--rounds 4]
 *                                                      [--connections 10,50]
 */
import { availableParallelism } from 'node:os';
import pg from 'pg';
import type { LedgerStore } from 'oncely';

type CompletedEntry = Parameters<LedgerStore<unknown>['complete']>[2];
import { createPostgresStore } from 'oncely/stores/postgres';
import { exitOnBadArgs, readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { machineBusyUs } from './ledger-cpu.js';

const NAME = 'pg-group-commit';
const USAGE = `usage: node dist/bench/${NAME}.js [options]
  The PostgreSQL store's deferred commit with no HTTP: concurrent loops committing requests,
  grouped and alone, against one INSERT in autocommit (the floor); req/s and CPU per request.
  --pg URL            PostgreSQL (default $ONCELY_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/test)
  --seconds N         length of each measured run (default 2)
  --rounds N          rounds, variants interleaved in each; medians kept (default 4)
  --connections LIST  concurrent loops, comma-separated; each count is measured in turn (default 10,50)
  --in-flight N       the grouped store's deferredGroups.inFlight (default: the store's, 2)
  --help              this text`;

const { values } = readBenchArgs(NAME, USAGE, {
  options: {
    pg: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    'in-flight': { type: 'string' },
    help: { type: 'boolean' },
  },
});
const url =
  values.pg ?? process.env.ONCELY_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const seconds = wholeArgOrExit(NAME, 'seconds', values.seconds, 2);
const rounds = wholeArgOrExit(NAME, 'rounds', values.rounds, 4);
const connectionCounts = (values.connections ?? '10,50').split(',').map((raw) => {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1)
    exitOnBadArgs(NAME, `--connections takes whole numbers >= 1, comma-separated; got ${raw}`);
  return n;
});

const CORES = availableParallelism();
const schema = `oncely_group_commit_${process.pid}`;
const EFFECT = `INSERT INTO "${schema}".bench_effects (amount, note) VALUES ($1, $2)`;
const connectionsMax = Math.max(...connectionCounts);
const pool = new pg.Pool({
  connectionString: url,
  max: connectionsMax,
  pipeline: true,
  idleTimeoutMillis: 0,
});
// The floor commits durably whatever the server's default is, as the store's durable commits do.
const floorPool = new pg.Pool({
  connectionString: url,
  max: connectionsMax,
  idleTimeoutMillis: 0,
  options: '-c synchronous_commit=on',
});
const options = { pool, schema, table: 'oncely_ledger', durability: 'durable' } as const;
const inFlight =
  values['in-flight'] === undefined
    ? undefined
    : wholeArgOrExit(NAME, 'in-flight', values['in-flight'], 2);
const grouped = createPostgresStore(
  inFlight === undefined ? options : { ...options, deferredGroups: { inFlight } },
);
const alone = createPostgresStore({ ...options, deferredGroups: { maxRequests: 1 } });

let keys = 0;
const BODY = Buffer.from('{"recorded":1}');
function entry(): CompletedEntry {
  const now = Date.now();
  const key = `k${++keys}`;
  return {
    scope: 'bench',
    key,
    fingerprint: 'ab'.repeat(32),
    state: 'completed',
    token: `t-${key}`,
    firstSeenAt: now,
    completedAt: now,
    expiresAt: now + 86_400_000,
    receipt: { status: 201, headers: [['content-type', 'application/json']], body: BODY },
  };
}
const WRITES = [{ sql: EFFECT, params: [1, 'bench'] }];

const VARIANTS = {
  floor: async () => void (await floorPool.query(EFFECT, [1, 'bench'])),
  grouped: async () => void (await grouped.capabilities.deferredCommit(entry(), WRITES)),
  alone: async () => void (await alone.capabilities.deferredCommit(entry(), WRITES)),
} as const;
type Variant = keyof typeof VARIANTS;

interface Run {
  readonly perSecond: number;
  readonly nodeUs: number;
  readonly machineUs: number;
  /** The share of the machine's cores that were busy, 0–1. */
  readonly busy: number;
}

async function run(variant: Variant, connections: number, ms: number): Promise<Run> {
  let count = 0;
  const cpu = process.cpuUsage();
  const machine = machineBusyUs();
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        await VARIANTS[variant]();
        count++;
      }
    }),
  );
  const elapsedUs = (performance.now() - started) * 1000;
  const { user, system } = process.cpuUsage(cpu);
  const machineUs = machineBusyUs() - machine;
  return {
    perSecond: count / (elapsedUs / 1e6),
    nodeUs: (user + system) / count,
    machineUs: machineUs / count,
    busy: machineUs / (elapsedUs * CORES),
  };
}
const middle = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const us = (x: number): string => (Number.isFinite(x) ? x.toFixed(0) : '–');

/** The URL as printed: its password hidden. */
const where = ((parsed) => {
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
})(new URL(url));
try {
  await grouped.sweep(0, 0); // the schema, the ledger's table and its partitions
} catch (error) {
  console.error(
    `bench/${NAME}: cannot set up on PostgreSQL at ${where}: ${(error as Error).message}`,
  );
  await Promise.all([pool.end(), floorPool.end()]);
  process.exit(1);
}
try {
  await pool.query(
    `CREATE TABLE "${schema}".bench_effects (amount INTEGER NOT NULL, note TEXT NOT NULL)`,
  );
  console.log(
    `bench/${NAME}: PostgreSQL ${where}, durable; ${rounds} round(s) of ${seconds} s, variants interleaved; medians`,
  );
  for (const connections of connectionCounts) {
    const runs = new Map<Variant, Run[]>();
    for (const variant of Object.keys(VARIANTS) as Variant[]) {
      await run(variant, connections, 300); // warm-up: JIT, connections, prepared statements
      runs.set(variant, []);
    }
    for (let round = 0; round < rounds; round++)
      for (const variant of Object.keys(VARIANTS) as Variant[])
        runs.get(variant)!.push(await run(variant, connections, seconds * 1000));
    const floor = middle(runs.get('floor')!.map((r) => r.perSecond));
    console.log(`\n${connections} concurrent loops`);
    console.log(
      'variant  req/s   spread         ÷ floor  node µs/req  machine µs/req  machine busy',
    );
    for (const [variant, rs] of runs) {
      const rates = rs.map((r) => r.perSecond);
      const rate = middle(rates);
      console.log(
        [
          variant.padEnd(7),
          rate.toFixed(0).padStart(6),
          `${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}`.padEnd(13),
          `${(rate / floor).toFixed(2)}×`.padStart(7),
          us(middle(rs.map((r) => r.nodeUs))).padStart(11),
          us(middle(rs.map((r) => r.machineUs))).padStart(14),
          `${(100 * middle(rs.map((r) => r.busy))).toFixed(0)} %`.padStart(12),
        ].join('  '),
      );
    }
  }
  console.log(
    '\nmachine µs/req: every process (this one and PostgreSQL), from /proc/stat; a row below the floor in req/s but also in machine µs waits on latency, not on CPU.',
  );
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await grouped.close();
  await alone.close();
  await pool.end();
  await floorPool.end();
}
