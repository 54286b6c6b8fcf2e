/**
 * One run of bench/anchors (the command line is bench/anchors.ts): probe Redis and PostgreSQL,
 * start the server process, check that every row dedupes, then time new keys and replays, the
 * rows of every table interleaved round by round, and print each table and its ratios.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  checkDedupe,
  describeDedupe,
  postUntilAnswered,
  type DedupeResult,
} from './anchors-check.js';
import { AnchorsServer } from './anchors-child.js';
import { medianRun, runLoad, type LoadRun } from './anchors-load.js';
import type { ServerSetup } from './anchors-protocol.js';
import { deleteRedisKeys, probeRedis } from './anchors-redis.js';
import { formatAnchors, type AnchorsRow } from './anchors-report.js';
import {
  anchorsRows,
  rowDurability,
  rowKey,
  TABLE_TITLES,
  variantOf,
  type AnchorsRowId,
  type Durability,
  type KeyShape,
  type Mode,
  type TableDurability,
  type VariantId,
} from './anchors-variants.js';

export interface AnchorsOptions {
  seconds: number;
  rounds: number;
  connections: number;
  pgUrl: string | undefined;
  redisUrl: string;
  variants: VariantId[];
  /** The tables: every row's effect durable (synchronous = FULL) or at 'process' (NORMAL). */
  tables: TableDurability[];
  modes: Mode[];
  /** How fresh keys are made (anchors-load.ts). */
  keys: KeyShape;
  cpuProfDir: string | undefined;
  checkOnly: boolean;
}

/** Each variant's warm-up per mode (JIT, prepared statements, pools, connections); not measured. */
const WARMUP_SECONDS = 1;

function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`  … ${line}\n`);
}

const redact = (url: string): string => url.replace(/\/\/[^@/]*@/, '//…@');

async function probePostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${redact(url)} is not reachable (${error instanceof Error ? error.message : String(error)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The rows that can run here (Redis and PostgreSQL probed), each with its durability. */
async function resolveRows(
  options: AnchorsOptions,
): Promise<{ rows: AnchorsRowId[]; durabilities: Map<string, Durability>; redisUsed: boolean }> {
  let variants = options.variants;
  const skip = (why: string, ids: readonly VariantId[]): void => {
    const gone = variants.filter((v) => ids.includes(v));
    if (gone.length === 0) return;
    console.log(`  skipped ${gone.join(', ')}: ${why}`);
    variants = variants.filter((v) => !ids.includes(v));
  };
  let redisDurability: Durability | undefined;
  const needsRedis = variants.filter((v) => variantOf(v).needs === 'redis');
  if (needsRedis.length > 0) {
    const redis = await probeRedis(options.redisUrl);
    if (!redis.ok) skip(`${redis.reason}; give --redis URL`, needsRedis);
    else {
      redisDurability = redis.durability;
      console.log(`  redis: ${redact(options.redisUrl)}; ${redis.detail}`);
    }
  }
  const needsPostgres = anchorsRows(variants, options.tables)
    .map((row) => row.variant)
    .filter((v) => variantOf(v).needs === 'postgres');
  if (needsPostgres.length > 0) {
    const why = options.pgUrl
      ? await probePostgres(options.pgUrl)
      : 'no PostgreSQL given (--pg URL or $ONCELY_TEST_POSTGRES_URL)';
    if (why) skip(why, needsPostgres);
    else console.log(`  postgres: ${redact(options.pgUrl!)}, a schema of its own, pool of 10`);
  }
  const rows = anchorsRows(variants, options.tables);
  const durabilities = new Map<string, Durability>();
  for (const row of rows) {
    const keys = variantOf(row.variant).durability;
    durabilities.set(
      rowKey(row),
      rowDurability(keys === 'redis' ? redisDurability! : keys, row.table),
    );
  }
  return { rows, durabilities, redisUsed: redisDurability !== undefined };
}

/** Correctness first: a row that does not dedupe is reported, whatever its speed. */
async function checkRows(
  server: AnchorsServer,
  url: string,
  rows: readonly AnchorsRowId[],
  runId: string,
): Promise<Map<string, DedupeResult>> {
  const checks = new Map<string, DedupeResult>();
  for (const row of rows) {
    if (variantOf(row.variant).reference !== undefined) continue;
    const key = rowKey(row);
    progress(`${key}: dedupe check`);
    const result = await checkDedupe(
      `${url}/${key}`,
      () => server.rows(row),
      `${runId}-check-${key.replace('/', '-')}`,
    );
    checks.set(key, result);
    if (!result.ok) {
      console.error(`bench/anchors: ${key} does not dedupe: ${describeDedupe(result)}`);
      process.exitCode = 1;
    }
  }
  return checks;
}

/** Warm-up, then the rounds: every row and mode once per round (interleaved); runs by row/mode. */
async function timeRows(
  server: AnchorsServer,
  url: string,
  rows: readonly AnchorsRowId[],
  options: AnchorsOptions,
  runId: string,
): Promise<Map<string, LoadRun[]>> {
  const runOne = async (row: AnchorsRowId, mode: Mode, seconds: number, tag: string) => {
    const path = `/${rowKey(row)}`;
    const key = `${runId}-${tag}-${row.table}-${row.variant}-${mode}`;
    if (mode === 'replay') {
      const first = await postUntilAnswered(`${url}${path}`, key);
      if (first.status < 200 || first.status >= 300)
        console.error(
          `bench/anchors: ${rowKey(row)}: the replayed key's first request got ${first.status}`,
        );
    }
    return runLoad({
      url,
      path,
      mode,
      key,
      keys: options.keys,
      seconds,
      connections: options.connections,
      count: () => server.count(row),
    });
  };

  // Warm-up: JIT, prepared statements, pools, Redis connections. Not measured.
  for (const row of rows)
    for (const mode of options.modes) {
      progress(`${rowKey(row)}: warm-up, ${mode}`);
      await runOne(row, mode, WARMUP_SECONDS, 'warm');
    }
  const runs = new Map<string, LoadRun[]>();
  for (let round = 1; round <= options.rounds; round++)
    for (const row of rows)
      for (const mode of options.modes) {
        progress(`${rowKey(row)}: ${mode}, round ${round}/${options.rounds}, ${options.seconds} s`);
        const run = await runOne(row, mode, options.seconds, `r${round}`);
        const at = `${rowKey(row)}/${mode}`;
        runs.set(at, [...(runs.get(at) ?? []), run]);
      }
  return runs;
}

export async function runAnchors(options: AnchorsOptions): Promise<void> {
  const runId = `anchors-${process.pid}-${process.hrtime.bigint().toString(36)}`;
  console.log(
    `bench/anchors: one Express app, POST with one SQLite INSERT as the effect (better-sqlite3, WAL; ${options.tables.map((t) => TABLE_TITLES[t]).join('; ')}); autocannon, ${options.connections} connections, ${options.keys === 'uuid' ? 'new keys random UUIDv4' : 'new keys sequential'}, ${options.seconds} s per run, ${options.rounds} round(s), the rows of every table interleaved; server in a child process. The machine may be shared: read the spread.`,
  );
  const resolved = await resolveRows(options);
  const { durabilities, redisUsed } = resolved;
  let rows = resolved.rows;

  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-anchors-'));
  const setup: ServerSetup = {
    dir,
    rows,
    ...(redisUsed ? { redis: { url: options.redisUrl, prefix: runId } } : {}),
    ...(options.pgUrl
      ? { postgres: { url: options.pgUrl, schema: `oncely_anchors_${process.pid}` } }
      : {}),
  };
  const server = new AnchorsServer(
    setup,
    options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [],
  );
  try {
    const { url, skipped } = await server.ready;
    for (const { row, reason } of skipped)
      console.log(`  skipped ${row}: could not be set up: ${reason}`);
    rows = rows.filter((row) => !skipped.some((s) => s.row === rowKey(row)));

    const checks = await checkRows(server, url, rows, runId);
    if (options.checkOnly) {
      for (const [key, result] of checks) console.log(`  ${key}: ${describeDedupe(result)}`);
      return;
    }
    const runs = await timeRows(server, url, rows, options, runId);
    const reported: AnchorsRow[] = rows.map((row) => {
      const median = (mode: Mode): LoadRun | undefined => {
        const all = runs.get(`${rowKey(row)}/${mode}`);
        return all && all.length > 0 ? medianRun(all) : undefined;
      };
      return {
        variant: variantOf(row.variant),
        table: row.table,
        durability: durabilities.get(rowKey(row))!,
        fresh: median('new'),
        replay: median('replay'),
        dedupe: checks.get(rowKey(row)),
      };
    });
    process.stdout.write(`\n${formatAnchors(reported)}`);
    printNotes();
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    if (redisUsed)
      await deleteRedisKeys(options.redisUrl, [`${runId}*`]).catch((error: unknown) =>
        console.error(`bench/anchors: could not delete this run's Redis keys: ${String(error)}`),
      );
  }
}

function printNotes(): void {
  console.log(
    "\nnew: every request a fresh Idempotency-Key; replay: every request the same key, answered once before the run. cpu µs: the server process's CPU time per response (user + system): what a response costs, less swayed by other load on the machine than req/s.",
  );
  console.log(
    "effect: the rows without oncely write the order with their own autocommit INSERT (durable table: one fsync each, and better-sqlite3 holds the event loop meanwhile); oncely writes it through the ledger's transaction, so the order and its receipt commit together (SQLite durable: concurrent requests share one COMMIT; PostgreSQL: the order goes into PostgreSQL).",
  );
  console.log(
    "durability of an acknowledged key (the weaker of its key's and its effect's): durable = survives power loss; process = survives a crash of the process; memory = lost on restart (the app's, or Redis's when it keeps nothing on disk).",
  );
}
