/**
 * One run of bench/anchors (the command line is bench/anchors.ts): probe Redis and PostgreSQL,
 * start the server process, check that every variant dedupes, then time new keys and replays,
 * variants interleaved round by round, and print the table and the ratios.
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
import { variantOf, type Durability, type Mode, type VariantId } from './anchors-variants.js';

export interface AnchorsOptions {
  seconds: number;
  rounds: number;
  connections: number;
  pgUrl: string | undefined;
  redisUrl: string;
  variants: VariantId[];
  modes: Mode[];
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

export async function runAnchors(options: AnchorsOptions): Promise<void> {
  const runId = `anchors-${process.pid}-${process.hrtime.bigint().toString(36)}`;
  let variants = options.variants;
  const skip = (why: string, ids: readonly VariantId[]): void => {
    const gone = variants.filter((v) => ids.includes(v));
    if (gone.length === 0) return;
    console.log(`  skipped ${gone.join(', ')}: ${why}`);
    variants = variants.filter((v) => !ids.includes(v));
  };

  console.log(
    `bench/anchors: one Express app, POST with one SQLite INSERT as the effect (better-sqlite3, WAL, synchronous = FULL); autocannon, ${options.connections} connections, ${options.seconds} s per run, ${options.rounds} round(s), variants interleaved; server in a child process. The machine may be shared: read the spread.`,
  );
  const durabilities = new Map<VariantId, Durability>();
  const needsRedis = variants.filter((v) => variantOf(v).needs === 'redis');
  let redisUsed = false;
  if (needsRedis.length > 0) {
    const redis = await probeRedis(options.redisUrl);
    if (!redis.ok) skip(`${redis.reason}; give --redis URL`, needsRedis);
    else {
      redisUsed = true;
      console.log(`  redis: ${redact(options.redisUrl)}; ${redis.detail}`);
      for (const v of needsRedis) durabilities.set(v, redis.durability);
    }
  }
  const needsPostgres = variants.filter((v) => variantOf(v).needs === 'postgres');
  if (needsPostgres.length > 0) {
    const why = options.pgUrl
      ? await probePostgres(options.pgUrl)
      : 'no PostgreSQL given (--pg URL or $ONCELY_TEST_POSTGRES_URL)';
    if (why) skip(why, needsPostgres);
    else console.log(`  postgres: ${redact(options.pgUrl!)}, a schema of its own, pool of 10`);
  }
  for (const v of variants) {
    const declared = variantOf(v).durability;
    if (declared !== 'redis') durabilities.set(v, declared);
  }

  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-anchors-'));
  const setup: ServerSetup = {
    dir,
    variants,
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
    for (const { variant, reason } of skipped) skip(`could not be set up: ${reason}`, [variant]);

    // Correctness first: a row that does not dedupe is reported, whatever its speed.
    const checks = new Map<VariantId, DedupeResult>();
    for (const variant of variants) {
      if (variant === 'none') continue;
      progress(`${variant}: dedupe check`);
      const result = await checkDedupe(
        `${url}/${variant}`,
        () => server.rows(variant),
        `${runId}-check-${variant}`,
      );
      checks.set(variant, result);
      if (!result.ok) {
        console.error(`bench/anchors: ${variant} does not dedupe: ${describeDedupe(result)}`);
        process.exitCode = 1;
      }
    }
    if (options.checkOnly) {
      for (const [variant, result] of checks)
        console.log(`  ${variantOf(variant).label}: ${describeDedupe(result)}`);
      return;
    }

    const runOne = async (variant: VariantId, mode: Mode, seconds: number, tag: string) => {
      const key = `${runId}-${tag}-${variant}-${mode}`;
      if (mode === 'replay') {
        const first = await postUntilAnswered(`${url}/${variant}`, key);
        if (first.status < 200 || first.status >= 300)
          console.error(
            `bench/anchors: ${variant}: the replayed key's first request got ${first.status}`,
          );
      }
      return runLoad({
        url,
        variant,
        mode,
        key,
        seconds,
        connections: options.connections,
        count: () => server.count(variant),
      });
    };

    // Warm-up: JIT, prepared statements, pools, Redis connections. Not measured.
    for (const variant of variants)
      for (const mode of options.modes) {
        progress(`${variant}: warm-up, ${mode}`);
        await runOne(variant, mode, WARMUP_SECONDS, 'warm');
      }
    const runs = new Map<string, LoadRun[]>();
    for (let round = 1; round <= options.rounds; round++)
      for (const variant of variants)
        for (const mode of options.modes) {
          progress(`${variant}: ${mode}, round ${round}/${options.rounds}, ${options.seconds} s`);
          const run = await runOne(variant, mode, options.seconds, `r${round}`);
          runs.set(`${variant}/${mode}`, [...(runs.get(`${variant}/${mode}`) ?? []), run]);
        }

    const rows: AnchorsRow[] = variants.map((variant) => {
      const median = (mode: Mode): LoadRun | undefined => {
        const all = runs.get(`${variant}/${mode}`);
        return all && all.length > 0 ? medianRun(all) : undefined;
      };
      return {
        variant: variantOf(variant),
        durability: durabilities.get(variant)!,
        fresh: median('new'),
        replay: median('replay'),
        dedupe: checks.get(variant),
      };
    });
    process.stdout.write(`\n${formatAnchors(rows)}`);
    console.log(
      "\nnew: every request a fresh Idempotency-Key; replay: every request the same key, answered once before the run. cpu µs: the server process's CPU time per response (user + system): what a response costs, less swayed by other load on the machine than req/s.",
    );
    console.log(
      "effect: the rows without oncely write the order with their own autocommit INSERT (one fsync each; better-sqlite3 holds the event loop meanwhile); oncely writes it through the ledger's transaction, so the order and its receipt commit together (SQLite: concurrent requests share one COMMIT; PostgreSQL: the order goes into PostgreSQL).",
    );
    console.log(
      "durability of an acknowledged key: durable = survives power loss; process = survives a crash of the process; memory = lost on restart (the app's, or Redis's when it keeps nothing on disk).",
    );
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    if (redisUsed)
      await deleteRedisKeys(options.redisUrl, [`${runId}*`]).catch((error: unknown) =>
        console.error(`bench/anchors: could not delete this run's Redis keys: ${String(error)}`),
      );
  }
}
