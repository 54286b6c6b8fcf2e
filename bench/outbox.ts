/**
 * bench/outbox: a webhook sender's cost in CPU, not wall time, so a shared machine cannot blur
 * it. oncely's outbox (SQLite and PostgreSQL journals) against graphile-worker + fetch and
 * pg-boss + fetch, each worker in a process of its own, one keep-alive receiver in another that
 * answers 200 at once; the intents recorded here, one commit each, as an app does. Contenders are
 * interleaved round by round in one run (bench/outbox-run.ts says what a round measures), and
 * the no-op rows compare claim and settle alone: oncely with sends that answer at once against
 * graphile-worker running no-op jobs. Beside the SQLite row, each round also measures low load
 * with its worker in this process (bench/outbox-embedded.ts), as an app embeds it.
 * `--hold-vacuum-minutes` runs bench/outbox-vacuum.ts instead.
 *
 *   npm run build && node dist/bench/outbox.js --pg URL [--intents 2000] [--rounds 3]
 */
import { exitOnBadArgs, readBenchArgs, wholeArgOrExit } from './bench-args.js';
import { CONTENDERS, onPostgres, engineOf, type Contender } from './outbox-protocol.js';
import { failedChecks, formatChecks, formatOutbox } from './outbox-report.js';
import {
  drain,
  GAP_MAX_MS,
  latencies,
  OutboxRig,
  prepareSet,
  RECORDERS,
  SATURATION_SHARE,
  setName,
  startCost,
  type OutboxOptions,
  type OutboxResult,
} from './outbox-run.js';
import { formatVacuum, runVacuumHeld } from './outbox-vacuum.js';
import { embeddedLowLoad } from './outbox-embedded.js';

const USAGE = `usage: node dist/bench/outbox.js [options]
  a webhook sender's CPU per delivered intent: oncely's outbox against graphile-worker + fetch
  and pg-boss + fetch, each in its own process; progress on stderr, the table on stdout
  --pg URL                  PostgreSQL (default ONCELY_TEST_POSTGRES_URL; without: SQLite rows only)
  --intents N               intents per drain (default 2000)
  --rounds N                rounds, contenders interleaved (default 3)
  --contenders a,b          among ${CONTENDERS.join(', ')} (default all)
  --low-load N              one-at-a-time intents per contender and round (default 6)
  --saturation-seconds N    open-loop arrivals at ${SATURATION_SHARE}× the drain rate, this long (default 1)
  --batch-size N            intents claimed at once by oncely and pg-boss (default 32)
  --warmup N                intents drained by each contender before round 1, not counted
                            (default: as many as a round, so round 1 runs on compiled code)
  --cpu-prof-dir DIR        oncely's worker processes write V8 CPU profiles there (node --cpu-prof)
  --hold-vacuum-minutes N   instead: drains while a REPEATABLE READ snapshot holds vacuum back
                            N minutes, against drains before it (PostgreSQL contenders)
  --vacuum-control          with it: the same drains, no snapshot held (the tables grow alone)
  --help                    this text`;

function parseContenders(raw: unknown): Contender[] {
  if (raw === undefined) return [...CONTENDERS];
  const names = String(raw).split(',');
  for (const name of names)
    if (!(CONTENDERS as readonly string[]).includes(name))
      exitOnBadArgs(
        'outbox',
        `--contenders: "${name}" is unknown; known: ${CONTENDERS.join(', ')}`,
      );
  return names as Contender[];
}

/** The rounds: per contender a drain, then (HTTP rows) low load and saturation. */
export async function runOutboxBench(
  options: OutboxOptions,
  rig: OutboxRig,
): Promise<OutboxResult> {
  const { contenders, progress } = options;
  const result: OutboxResult = {
    drains: [],
    latency: new Map(contenders.map((c) => [c, { low: [], lowFromCommit: [], saturated: [] }])),
    checks: [],
    startCostUs: new Map(),
    embedded: { low: [], lowFromCommit: [] },
  };
  await rig.start(contenders, options.batchSize, options.cpuProfDir);
  // Warm-up (JIT, prepared statements, connections), not counted; then each empty start's cost.
  for (const contender of contenders) {
    progress(`warm-up: ${contender}`);
    const set = setName(contender, 0);
    await prepareSet(rig, contender, set);
    const { check } = await drain(rig, contender, set, options.warmupIntents, 0, 0);
    result.checks.push(check);
    result.startCostUs.set(contender, await startCost(rig, contender, set));
  }
  for (let round = 1; round <= options.rounds; round++) {
    // Rotated each round, so no contender always runs first on a warm or cold machine.
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
    for (const contender of order) {
      progress(`round ${round}/${options.rounds}: ${contender}, ${options.intents} intents`);
      const set = setName(contender, round);
      await prepareSet(rig, contender, set);
      const startUs = result.startCostUs.get(contender)!;
      const { run, check } = await drain(rig, contender, set, options.intents, startUs, round);
      result.drains.push(run);
      result.checks.push(check);
      const perUs = (us: number): string => (us / run.intents).toFixed(0);
      progress(
        `  ${perUs(run.cpuUs)} µs a delivery (worker ${perUs(run.raw.workerUs)}, PostgreSQL ${perUs(run.raw.databaseUs)}), ${((run.intents * 1000) / run.wallMs).toFixed(0)}/s`,
      );
      if (engineOf(contender).noop) continue;
      const rate = (run.intents * 1000) / run.wallMs;
      const measured = await latencies(rig, contender, set, rate, options);
      const pooled = result.latency.get(contender)!;
      pooled.low.push(...measured.low);
      pooled.lowFromCommit.push(...measured.lowFromCommit);
      pooled.saturated.push(...measured.saturated);
      result.checks.push(...measured.checks);
      // Beside the SQLite row, in the same round: its worker in this process.
      if (contender !== 'oncely-sqlite' || options.lowLoadSamples === 0) continue;
      progress(`round ${round}/${options.rounds}: oncely-sqlite, worker in this process`);
      const embedded = await embeddedLowLoad(rig, round, options);
      result.embedded.low.push(...embedded.low);
      result.embedded.lowFromCommit.push(...embedded.lowFromCommit);
      result.checks.push(...embedded.checks);
    }
  }
  return result;
}

async function main(): Promise<void> {
  const { values } = readBenchArgs('outbox', USAGE, {
    options: {
      pg: { type: 'string' },
      intents: { type: 'string' },
      rounds: { type: 'string' },
      contenders: { type: 'string' },
      'low-load': { type: 'string' },
      'saturation-seconds': { type: 'string' },
      'batch-size': { type: 'string' },
      warmup: { type: 'string' },
      'hold-vacuum-minutes': { type: 'string' },
      'cpu-prof-dir': { type: 'string' },
      'vacuum-control': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  const pgUrl =
    typeof values.pg === 'string'
      ? values.pg
      : process.env['ONCELY_TEST_POSTGRES_URL'] || undefined;
  const wanted = parseContenders(values.contenders);
  const contenders = pgUrl === undefined ? wanted.filter((c) => !onPostgres(c)) : wanted;
  const intents = wholeArgOrExit('outbox', 'intents', values.intents, 2000);
  const options: OutboxOptions = {
    intents,
    rounds: wholeArgOrExit('outbox', 'rounds', values.rounds, 3),
    contenders,
    pgUrl,
    lowLoadSamples: wholeArgOrExit('outbox', 'low-load', values['low-load'], 6, 0),
    saturationSeconds: wholeArgOrExit(
      'outbox',
      'saturation-seconds',
      values['saturation-seconds'],
      1,
    ),
    batchSize: wholeArgOrExit('outbox', 'batch-size', values['batch-size'], 32),
    warmupIntents: wholeArgOrExit('outbox', 'warmup', values.warmup, intents),
    cpuProfDir: values['cpu-prof-dir'],
    progress: (line) => process.stderr.write(`  … ${line}\n`),
  };
  const holdMinutes =
    values['hold-vacuum-minutes'] === undefined
      ? undefined
      : wholeArgOrExit('outbox', 'hold-vacuum-minutes', values['hold-vacuum-minutes'], 5);
  if (holdMinutes !== undefined && pgUrl === undefined)
    exitOnBadArgs('outbox', '--hold-vacuum-minutes needs PostgreSQL (--pg URL)');
  const rig = new OutboxRig(pgUrl);
  // Ctrl-C: the children get SIGINT too; end them, drop the schemas and files, then leave. The
  // waits that the ended children break are not errors to print.
  const interrupted = (signal: NodeJS.Signals): void => {
    process.stderr.write(`bench/outbox: ${signal}, cleaning up\n`);
    stopping = true;
    void rig.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    if (holdMinutes !== undefined) {
      const hold = values['vacuum-control'] !== true;
      console.log(formatVacuum(await runVacuumHeld(rig, options, holdMinutes, hold)));
      return;
    }
    console.log(
      `bench/outbox: ${intents} intents a drain, ${options.rounds} rounds, contenders interleaved; recorded ${RECORDERS} at a time, one commit each; batches of ${options.batchSize}; low load: ${options.lowLoadSamples} intents a round, each after 0–${GAP_MAX_MS} ms; saturation: ${SATURATION_SHARE}× the drain's rate for ${options.saturationSeconds} s. Every row durable: PostgreSQL synchronous_commit on; SQLite WAL, synchronous = FULL.`,
    );
    const result = await runOutboxBench(options, rig);
    console.log(formatOutbox(result));
    console.log(
      `CPU: the worker process (every thread, /proc/<pid>/task/*/schedstat) plus the PostgreSQL backends of its connections (by application_name), from go until every intent is delivered and the worker stopped, less an empty start and stop (µs: ${[
        ...result.startCostUs,
      ]
        .map(([c, us]) => `${c} ${Math.round(us)}`)
        .join(
          ', ',
        )}). Medians of ${options.rounds} rounds (lowest–highest); latency pooled over the rounds, from the record call to the receiver's first arrival (low load also from the record's return: the wake-up without the record's own commit). "Worker in the recording process": low load with the SQLite worker in this process on the journal's own store, woken in process (no file event between them); its CPU is this process's, so it has no drain columns.`,
    );
    console.log(formatChecks(result.checks));
    if (failedChecks(result.checks).length > 0) process.exitCode = 1;
  } finally {
    await rig.close();
  }
}

/** Set on SIGINT or SIGTERM. */
let stopping = false;

const isMain = process.argv[1]?.endsWith('/outbox.js') === true;
if (isMain)
  main().catch((error: unknown) => {
    if (stopping) return;
    console.error(error instanceof Error ? error.stack : String(error));
    process.exitCode = 1;
  });
