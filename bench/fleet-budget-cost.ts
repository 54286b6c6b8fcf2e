/**
 * What a shared retry budget costs a process, so its round trips are cut only where that pays:
 * an acquire (one per retry) on SQLite and PostgreSQL beside the in-process bucket, and the
 * success path's refunds written one by one (refundBatch 0) or batched (the default, 10). Rounds
 * interleave the variants; each row prints the median µs per call over rounds and the spread.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { RetryTokenBucket } from 'oncely';
import { createPostgresRetryBudget } from 'oncely/stores/postgres';
import { createSqliteRetryBudget, openSqliteDatabase } from 'oncely/stores/sqlite';

interface Budget {
  tryAcquire(cost: number): boolean | Promise<boolean>;
  recordSuccess(lastRetryCost: number): void;
  flush?(): Promise<void>;
  close?(): Promise<void>;
}

const CALLS = 500;
const HUGE = 1e12; // never drained, never capped: every call does the same work

export async function measureRoundTrips(options: {
  readonly file: string;
  readonly pgUrl: string | undefined;
  readonly rounds: number;
}): Promise<void> {
  const name = `bench-fleet-cost-${process.pid}`;
  const sqlite = (refundBatch?: number) =>
    createSqliteRetryBudget({
      database: () => openSqliteDatabase(options.file),
      capacity: HUGE,
      name,
      ...(refundBatch === undefined ? {} : { refundBatch }),
    });
  const pools: pg.Pool[] = [];
  const postgres = (refundBatch?: number) => {
    const pool = new pg.Pool({ connectionString: options.pgUrl, max: 2 });
    pools.push(pool);
    return createPostgresRetryBudget({
      pool,
      capacity: HUGE,
      name,
      ...(refundBatch === undefined ? {} : { refundBatch }),
    });
  };
  const variants: Array<[string, Budget, (b: Budget) => Promise<void>]> = [];
  const acquire = async (b: Budget) => {
    for (let i = 0; i < CALLS; i++) await b.tryAcquire(5);
  };
  const succeed = async (b: Budget) => {
    for (let i = 0; i < CALLS; i++) b.recordSuccess(0);
    await b.flush?.();
  };
  variants.push(['acquire, in-process bucket', new RetryTokenBucket({ capacity: HUGE }), acquire]);
  variants.push(['acquire, SQLite', sqlite(), acquire]);
  if (options.pgUrl !== undefined) variants.push(['acquire, PostgreSQL', postgres(), acquire]);
  variants.push(['success, in-process bucket', new RetryTokenBucket({ capacity: HUGE }), succeed]);
  variants.push(['success, SQLite, refund each', sqlite(0), succeed]);
  variants.push(['success, SQLite, batched 10', sqlite(), succeed]);
  if (options.pgUrl !== undefined) {
    variants.push(['success, PostgreSQL, refund each', postgres(0), succeed]);
    variants.push(['success, PostgreSQL, batched 10', postgres(), succeed]);
  }
  const samples = variants.map(() => [] as number[]);
  for (const [, budget, run] of variants) await run(budget); // warm: tables, statements, pools
  for (let round = 0; round < options.rounds; round++) {
    // A rotating start: no variant always runs first (or last) in a round.
    for (let k = 0; k < variants.length; k++) {
      const i = (k + round) % variants.length;
      const [, budget, run] = variants[i]!;
      const start = performance.now();
      await run(budget);
      samples[i]!.push(((performance.now() - start) * 1000) / CALLS);
    }
  }
  console.log(
    `\nRound trips: µs per call, median (min-max) of ${options.rounds} rounds × ${CALLS} calls, one process`,
  );
  variants.forEach(([label], i) => {
    const s = [...samples[i]!].sort((a, b) => a - b);
    const median = s[Math.floor(s.length / 2)]!;
    console.log(
      `  ${label.padEnd(34)}${median.toFixed(1).padStart(9)}  (${s[0]!.toFixed(1)}-${s[s.length - 1]!.toFixed(1)})`,
    );
  });
  if (options.pgUrl === undefined) console.log('  PostgreSQL rows skipped: no --pg URL');
  for (const [, budget] of variants) await budget.close?.();
  await Promise.all(pools.map((pool) => pool.end()));
  if (options.pgUrl !== undefined) {
    const client = new pg.Client({ connectionString: options.pgUrl });
    await client.connect();
    await client.query('DELETE FROM oncely_retry_budgets WHERE name = $1', [name]);
    await client.end();
  }
}
