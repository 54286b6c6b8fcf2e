/**
 * What oncely costs a route that writes through the app's ORM: for each ORM × database, new-key
 * requests/s of an HTTP route (oncely/node) that inserts an order through the ORM in the ledger's
 * transaction, against the same route without oncely (the order through the same ORM, one INSERT
 * committed by itself), at the same durability (every commit fsynced). Beside them: the order in
 * the ORM's own transaction without oncely (the guarded route's transaction shape, without its
 * claim and receipt), the guarded route with `writes: 'deferred'` (no claim; the key's row ends
 * the ORM's transaction), and the guarded route on oncely's built-in store through `context.sql`.
 * Routes interleaved round by round; medians, the lowest and highest round, and the ratios
 * (median of the rounds' ratios, with their spread), by req/s and by requests per CPU-second of
 * the server and its PostgreSQL backends. Each pair's server runs in a child process
 * (bench/orm-server.ts).
 *
 *   npm run build && node dist/bench/orm.js [--seconds 3] [--rounds 3] [--connections 10]
 *     [--orms kysely,knex,drizzle,prisma,typeorm] [--dbs postgres,sqlite] [--pg URL]
 *     [--cpu-prof DIR]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { exitOnBadArgs, readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { ORM_DATABASES, ORMS, type Orm, type OrmDatabase, type OrmTarget } from './orm-clients.js';
import type { BenchServerSetup } from './orm-server.js';
import { databaseBackends } from './ledger-cpu.js';
import { median } from './outbox-report.js';
import { forkServer, loadRoute, type RouteRun } from './route-load.js';

const ROUTES = {
  bare: 'no oncely: the order through the ORM, committed by itself',
  tx: "no oncely: the order in the ORM's own transaction (BEGIN, INSERT, COMMIT)",
  claimed:
    'oncely on the ORM: the key claimed, then the order through its transaction, with the receipt',
  deferred:
    "oncely on the ORM, writes: 'deferred': the order through its transaction, the key's row last, one commit",
  sql: "oncely's built-in store: the order through context.sql, with the receipt",
} as const;
type Route = keyof typeof ROUTES;

const USAGE = `usage: node dist/bench/orm.js [options]
  New-key req/s of a route inserting an order through an ORM: without oncely (the INSERT alone,
  and in the ORM's own transaction), guarded by oncely on the ORM (createOrmLedgerStore), and
  guarded by oncely's built-in store (context.sql).
  --seconds N       length of each measured run (default 3)
  --rounds N        rounds, routes interleaved in each; medians kept (default 3)
  --connections N   autocannon connections (default 10); PostgreSQL pools get as many
  --orms A,B        from ${ORMS.join(', ')} (default all)
  --dbs A,B         from ${ORM_DATABASES.join(', ')} (default both)
  --pg URL          PostgreSQL (default $ONCELY_TEST_POSTGRES_URL; none: its pairs are skipped)
  --cpu-prof DIR    profile each server process (node --cpu-prof) into DIR
  --help            this text`;

const { values } = readBenchArgs('orm', USAGE, {
  options: {
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    orms: { type: 'string' },
    dbs: { type: 'string' },
    pg: { type: 'string' },
    'cpu-prof': { type: 'string' },
    help: { type: 'boolean' },
  },
});
const seconds = wholeArgOrExit('orm', 'seconds', values.seconds, 3);
const rounds = wholeArgOrExit('orm', 'rounds', values.rounds, 3);
const connections = wholeArgOrExit('orm', 'connections', values.connections, 10);
const orms = listArg('orms', values.orms, ORMS);
const dbs = listArg('dbs', values.dbs, ORM_DATABASES);
const pgUrl = values.pg ?? (process.env['ONCELY_TEST_POSTGRES_URL'] || undefined);
const profileDir = values['cpu-prof'];

function listArg<T extends string>(name: string, raw: string | undefined, all: readonly T[]): T[] {
  if (raw === undefined) return [...all];
  const named = raw.split(',').map((v) => v.trim());
  const unknown = named.filter((v) => !(all as readonly string[]).includes(v));
  if (unknown.length > 0 || named.length === 0)
    exitOnBadArgs('orm', `--${name} takes names from ${all.join(', ')}; got ${raw}`);
  return all.filter((v) => named.includes(v));
}

const BODY = '{"item":"book","qty":2}';
const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-orm-'));
const serverFile = fileURLToPath(new URL('./orm-server.js', import.meta.url));

async function withSchema<T>(url: string, fn: (schema: string) => Promise<T>): Promise<T> {
  const schema = `oncely_bench_orm_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    return await fn(schema);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

/** A route's run, with the CPU µs per request of the PostgreSQL backends that served it. */
interface Run extends RouteRun {
  readonly databaseUs: number;
}
type Runs = Record<Route, Run[]>;

/** The server's backends are found by this application_name (pg_stat_activity). */
const APPLICATION = `oncely-bench-orm-${process.pid}`;
const named = (url: string): string => {
  const withName = new URL(url);
  withName.searchParams.set('application_name', APPLICATION);
  return withName.href;
};

async function benchPair(orm: Orm, target: OrmTarget): Promise<Runs> {
  const setup: BenchServerSetup = {
    orm,
    target: target.db === 'postgres' ? { ...target, url: named(target.url) } : target,
    ...(target.db === 'sqlite' ? { sqlFile: join(dir, `${orm}-sql.db`) } : {}),
    poolSize: connections,
  };
  const server = await forkServer(
    serverFile,
    [JSON.stringify(setup)],
    profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  );
  const backends =
    target.db === 'postgres' ? await databaseBackends(target.url, APPLICATION) : undefined;
  const routes = Object.keys(ROUTES) as Route[];
  const load = async (path: Route, s: number): Promise<Run> => {
    const before = await backends?.cpu();
    const run = await loadRoute(server, {
      path: `/${path}`,
      keys: 'fresh',
      body: BODY,
      connections,
      seconds: s,
    });
    const after = await backends?.cpu();
    let databaseUs = 0;
    for (const [pid, us] of after ?? []) databaseUs += us - (before?.get(pid) ?? us);
    return { ...run, databaseUs: databaseUs / Math.max(1, run.reqPerS * s) };
  };
  try {
    for (const route of routes) await load(route, 1); // warm-up
    const runs: Runs = { bare: [], tx: [], claimed: [], deferred: [], sql: [] };
    for (let round = 0; round < rounds; round++)
      for (const route of routes) runs[route].push(await load(route, seconds));
    return runs;
  } finally {
    await backends?.close();
    await server.exit();
  }
}

const fixed = (n: number): string => String(Math.round(n));
const ratios = (a: Run[], b: Run[]): number[] => a.map((r, i) => r.reqPerS / b[i]!.reqPerS);
/** CPU per request, the server's and its database backends', of the same round. */
const cpuOf = (r: Run): number => r.cpuUs + r.databaseUs;
/** Requests per CPU-second (server + database) of a over b, round by round. */
const cpuRatios = (a: Run[], b: Run[]): number[] => a.map((r, i) => cpuOf(b[i]!) / cpuOf(r));
const ratioCell = (xs: number[]): string =>
  `${median(xs).toFixed(2)}× (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
const reqCell = (runs: Run[]): string => {
  const xs = runs.map((r) => r.reqPerS);
  return `${fixed(median(xs)).padStart(5)} (${fixed(Math.min(...xs))}–${fixed(Math.max(...xs))})`;
};

/** One block per pair: a line per route, its ratios to bare, tx and the built-in store's route. */
function printPair(name: string, runs: Runs): void {
  const failed = (Object.keys(ROUTES) as Route[]).reduce(
    (sum, route) => sum + runs[route].reduce((s, r) => s + r.failed, 0),
    0,
  );
  console.log(`\n${name} (failed: ${failed})`);
  for (const route of Object.keys(ROUTES) as Route[]) {
    const guarded = route === 'claimed' || route === 'deferred';
    const cells = [
      `  ${route.padEnd(9)}`,
      reqCell(runs[route]).padEnd(18),
      fixed(median(runs[route].map(cpuOf))).padStart(6),
    ];
    if (route !== 'bare')
      cells.push(
        ratioCell(ratios(runs[route], runs.bare)).padEnd(19),
        ratioCell(cpuRatios(runs[route], runs.bare)).padEnd(19),
      );
    if (guarded)
      cells.push(
        ratioCell(ratios(runs[route], runs.tx)).padEnd(19),
        ratioCell(ratios(runs[route], runs.sql)).padEnd(19),
      );
    console.log(cells.join(' '));
  }
}

console.log(
  `bench/orm: POST /orders through oncely/node, a new key per request; autocannon, ${connections} connections, ${seconds} s per run, ${rounds} round(s), routes interleaved; each ORM × database's server in a child process; every commit durable`,
);
for (const [route, what] of Object.entries(ROUTES)) console.log(`  ${route.padEnd(9)} ${what}`);
console.log(
  `\n  ${'route'.padEnd(9)} ${'req/s'.padEnd(18)} ${'cpu µs'.padStart(6)} ${'×bare'.padEnd(19)} ${'×bare per CPU'.padEnd(19)} ${'×tx'.padEnd(19)} ×sql`,
);
try {
  for (const db of dbs as OrmDatabase[])
    for (const orm of orms) {
      const name = `${orm} ${db}`;
      if (db === 'postgres') {
        if (pgUrl === undefined) {
          console.log(
            `${name.padEnd(17)} skipped: no PostgreSQL (--pg URL or $ONCELY_TEST_POSTGRES_URL)`,
          );
          continue;
        }
        printPair(
          name,
          await withSchema(pgUrl, (schema) => benchPair(orm, { db, url: pgUrl, schema })),
        );
      } else printPair(name, await benchPair(orm, { db, file: join(dir, `${orm}.db`) }));
    }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  '\nreq/s: median (lowest–highest round). cpu µs: CPU per request of the server and its PostgreSQL backends (SQLite: the server alone), user + system, median. ×bare, ×tx, ×sql: req/s over that route’s, median of the rounds’ ratios (lowest–highest); target ×bare ≥ 0.90. ×bare per CPU: requests per CPU-second over bare’s. failed: non-2xx, errors and timeouts over every run.',
);
