/**
 * bench/outbox --hold-vacuum-minutes N: the PostgreSQL senders drain into one table (queue) each,
 * round after round, first freely (`rounds` drains each), then for N minutes while another
 * session holds a REPEATABLE READ snapshot open: no row version deleted or updated after it can
 * be vacuumed away, so every claim and settle leaves dead tuples that stay in the heap and its
 * indexes (PgQue measured a SKIP LOCKED queue losing 35 % of its throughput so). It reports each
 * sender's throughput and CPU per delivery in the last third of the hold against before it, and
 * the dead tuples of the bench's tables (pg_stat_user_tables.n_dead_tup) before and at the end.
 * After every round the harness VACUUMs the bench's tables, as autovacuum would (a shared server
 * may run with it off; the bench leaves the server's settings alone): held back, that VACUUM
 * removes nothing newer than the snapshot.
 * `--vacuum-control` runs the same drains for as long with no snapshot held: the journal's tables
 * also grow over the run, and the control tells that growth from the held-back vacuum.
 */
import pg from 'pg';
import { engineOf, monotonicMs, onPostgres, type Contender } from './outbox-protocol.js';
import { median } from './outbox-report.js';
import {
  drain,
  prepareSet,
  setName,
  startCost,
  type DrainRun,
  type OutboxOptions,
  type OutboxRig,
} from './outbox-run.js';

export interface VacuumResult {
  readonly minutes: number;
  /** False for the control run: the same drains, no snapshot held. */
  readonly held: boolean;
  readonly before: DrainRun[];
  /** Drains that began in the last third of the hold. */
  readonly late: DrainRun[];
  /** Every drain of the hold. */
  readonly during: DrainRun[];
  readonly drains: number;
  readonly deadBefore: DeadTuples[];
  readonly deadAfter: DeadTuples[];
  readonly failed: string[];
}

export interface DeadTuples {
  readonly table: string;
  readonly dead: number;
  readonly live: number;
}

/** The bench's schemas: oncely's, graphile-worker's and pg-boss's. */
const schemasOf = (rig: OutboxRig): string[] => ['', '_gw', '_boss'].map((s) => rig.schema + s);

async function deadTuples(rig: OutboxRig): Promise<DeadTuples[]> {
  const { rows } = await rig.pool!.query<{ table: string; dead: string; live: string }>(
    `SELECT schemaname || '.' || relname AS table, n_dead_tup AS dead, n_live_tup AS live
       FROM pg_stat_user_tables WHERE schemaname = ANY($1::text[]) AND n_dead_tup + n_live_tup > 0
      ORDER BY n_dead_tup DESC LIMIT 8`,
    [schemasOf(rig)],
  );
  return rows.map((r) => ({ table: r.table, dead: Number(r.dead), live: Number(r.live) }));
}

/** VACUUM every table of the bench's schemas (in autocommit: VACUUM runs in no transaction). */
async function vacuumTables(rig: OutboxRig): Promise<void> {
  const { rows } = await rig.pool!.query<{ schema: string; table: string }>(
    `SELECT schemaname AS schema, relname AS table FROM pg_stat_user_tables
      WHERE schemaname = ANY($1::text[])`,
    [schemasOf(rig)],
  );
  for (const { schema, table } of rows) await rig.pool!.query(`VACUUM "${schema}"."${table}"`);
}

export async function runVacuumHeld(
  rig: OutboxRig,
  options: OutboxOptions,
  minutes: number,
  hold = true,
): Promise<VacuumResult> {
  const contenders = options.contenders.filter((c) => onPostgres(c) && !engineOf(c).noop);
  const failed: string[] = [];
  await rig.start(contenders, options.batchSize);
  const costs = new Map<Contender, number>();
  let round = 0;
  const drainAll = async (runs: DrainRun[], label: string): Promise<void> => {
    round++;
    for (const contender of contenders) {
      options.progress(`${label}: ${contender}, ${options.intents} intents`);
      const { run, check } = await drain(
        rig,
        contender,
        setName(contender, 'vac'),
        options.intents,
        costs.get(contender) ?? 0,
        round,
        `d${round}`, // one table for every drain: each drain's keys are its own
      );
      if (check.distinct !== check.expected || check.requests !== check.expected)
        failed.push(
          `${contender} round ${round}: ${check.distinct} keys, ${check.requests} requests`,
        );
      runs.push(run);
      options.progress(
        `  ${(run.cpuUs / run.intents).toFixed(0)} µs a delivery (worker ${(run.raw.workerUs / run.intents).toFixed(0)}, database ${(run.raw.databaseUs / run.intents).toFixed(0)}), ${((run.intents * 1000) / run.wallMs).toFixed(0)}/s`,
      );
    }
    await vacuumTables(rig);
  };
  for (const contender of contenders) await prepareSet(rig, contender, setName(contender, 'vac'));
  await drainAll([], 'warm-up');
  for (const contender of contenders)
    costs.set(contender, await startCost(rig, contender, setName(contender, 'vac')));
  const before: DrainRun[] = [];
  for (let i = 0; i < options.rounds; i++) await drainAll(before, `before the hold ${i + 1}`);
  const deadBefore = await deadTuples(rig);
  const holder = new pg.Client({ connectionString: rig.urlFor('holder') });
  await holder.connect();
  const late: DrainRun[] = [];
  const during: DrainRun[] = [];
  let drains = 0;
  try {
    await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    // The first statement takes the snapshot: vacuum is held back from here until COMMIT.
    if (hold) await holder.query('SELECT count(*) FROM pg_class');
    const start = monotonicMs();
    const end = start + minutes * 60_000;
    while (monotonicMs() < end) {
      const runs: DrainRun[] = [];
      const began = monotonicMs();
      const left = ((end - began) / 60_000).toFixed(1);
      await drainAll(runs, `${hold ? 'vacuum held' : 'control'}, ${left} min left`);
      drains += runs.length;
      during.push(...runs);
      if (began >= start + (2 / 3) * (end - start)) late.push(...runs);
    }
  } finally {
    await holder.query('COMMIT').catch(() => undefined);
    await holder.end();
  }
  return {
    minutes,
    held: hold,
    before,
    late,
    during,
    drains,
    deadBefore,
    deadAfter: await deadTuples(rig),
    failed,
  };
}

const rateOf = (runs: readonly DrainRun[]): number =>
  median(runs.map((r) => (r.intents * 1000) / r.wallMs));
const cpuOf = (runs: readonly DrainRun[]): number => median(runs.map((r) => r.cpuUs / r.intents));

export function formatVacuum(result: VacuumResult): string {
  const contenders = [...new Set(result.before.map((r) => r.contender))];
  const lines = [
    `${result.held ? 'vacuum held back' : 'control, no snapshot held,'} ${result.minutes} min (${result.drains} drains); the last third and the whole hold against before, medians:`,
    '| sender | deliveries/s before | last third | ÷ before | whole hold | ÷ before | CPU µs per delivery before | last third | ÷ before |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const contender of contenders) {
    const before = result.before.filter((r) => r.contender === contender);
    const late = result.late.filter((r) => r.contender === contender);
    const rw = rateOf(result.during.filter((r) => r.contender === contender));
    const [rb, rl, cb, cl] = [rateOf(before), rateOf(late), cpuOf(before), cpuOf(late)];
    lines.push(
      `| ${contender} | ${rb.toFixed(0)} | ${rl.toFixed(0)} | **${(rl / rb).toFixed(2)}** | ${rw.toFixed(0)} | ${(rw / rb).toFixed(2)} | ${cb.toFixed(0)} | ${cl.toFixed(0)} | ${(cl / cb).toFixed(2)} |`,
    );
  }
  const dead = (rows: readonly DeadTuples[]): string =>
    rows.map((r) => `  ${r.table}: ${r.dead} dead, ${r.live} live`).join('\n');
  lines.push(`dead tuples before:\n${dead(result.deadBefore)}`);
  lines.push(`dead tuples at its end:\n${dead(result.deadAfter)}`);
  lines.push(
    result.failed.length === 0
      ? 'exactly once: every intent of every drain delivered once'
      : `NOT exactly once:\n  ${result.failed.join('\n  ')}`,
  );
  return `${lines.join('\n')}\n`;
}
