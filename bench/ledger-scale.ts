/**
 * The ledger at scale, on SQLite and PostgreSQL, in one process run:
 *   1. bytes per receipt: the same rows in today's layout and in the layout before (rowid table,
 *      hex fingerprint, JSON headers, tombstones in place);
 *   2. new-key and replay ops/s (and CPU µs per request) with 0, 1M (… 10M) receipts held, rounds interleaved, median and
 *      spread, and the ratio at N ÷ empty; replays of keys the run wrote (recent: what retries
 *      are) and of random keys of the whole ledger (cold pages, the worst case);
 *   3. a sweep of N expired receipts by the ledger's sweeper, with new-key writers running
 *      throughout, one in this process and one in a second process: write latencies while it
 *      sweeps against those of windows with no sweep, interleaved (bench/ledger-scale-sweep.ts);
 *      with --before, also everything due in one unbounded step (on SQLite one transaction, as
 *      the sweep did before bounded steps).
 * Rows are bulk-loaded with SQL (bench/ledger-scale-load.ts), never through HTTP. Durability: the
 * stores' defaults (SQLite WAL at synchronous = FULL with group commit; PostgreSQL
 * receipts with synchronous commit, claims asynchronous).
 *
 *   npm run build && node dist/bench/ledger-scale.js [--sizes 0,1000000,10000000] [--sweep 1000000]
 *        [--ops 1000] [--rounds 3] [--bytes-rows 200000] [--only sqlite|postgres] [--pg URL]
 *        [--window-ms 5000] [--sweep-runs 1] [--before]
 */
import { createLedger, jsonReceipt, type LedgerStore } from 'oncely';
import type { Durability } from 'oncely';

/** The stores' durability choices (docs/durability.md). */
const DURABILITIES: readonly Durability[] = ['durable', 'process'];
import {
  BENCH_FINGERPRINT,
  BENCH_SCOPE,
  benchKey,
  oldPostgresSchema,
  oldSqliteSchema,
  type Layout,
} from './ledger-scale-load.js';
import {
  BACKENDS,
  postgresPlace,
  removePlaces,
  sqlitePlace,
  type Place,
} from './ledger-scale-places.js';
import { sweepInOneTransaction, sweepInWindows, type WindowStats } from './ledger-scale-sweep.js';
import { WRITES_PER_SECOND } from './ledger-scale-writer.js';
import { exitOnBadArgs, readBenchArgs } from './bench-args.js';

const DEFAULTS = {
  sizes: '0,1000000',
  sweep: 1_000_000,
  ops: 1000,
  rounds: 3,
  bytesRows: 200_000,
  windowMs: 5000,
} as const;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]): string =>
  `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
const fmt = (n: number): string => Math.round(n).toLocaleString('en');

/** One measurement: ops/s, and the process's CPU time per request. */
interface Speed {
  readonly opsPerSecond: number;
  /**
   * User and system CPU µs per request (fsync waits are not CPU): steadier than ops/s on a shared
   * machine, where one fsync can take ten times another, and the part a larger B-tree can add to.
   * This process's only: on PostgreSQL the client's share, the server's own CPU is not in it.
   */
  readonly cpuUs: number;
}

/** Sequential ledger requests, like one client at a time. */
async function measure(
  store: LedgerStore<unknown>,
  keys: (i: number) => string,
  ops: number,
): Promise<Speed> {
  const ledger = createLedger({ store });
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < ops; i++) {
    const result = await ledger.execute(
      { scope: BENCH_SCOPE, key: keys(i), fingerprint: BENCH_FINGERPRINT },
      () => jsonReceipt(201, { ok: true }),
    );
    if (result.kind !== 'executed' && result.kind !== 'replayed')
      throw new Error(`bench request answered ${result.kind}`);
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { opsPerSecond: ops / seconds, cpuUs: (used.user + used.system) / ops };
}

async function bytesPerReceipt(make: () => Place, rows: number): Promise<Record<Layout, number>> {
  const out = {} as Record<Layout, number>;
  for (const layout of ['before', 'current'] as const) {
    const place = make();
    try {
      await place.store.ready?.();
      const table = layout === 'current' ? 'oncely_ledger' : 'ledger_before';
      if (layout === 'before')
        await place.exec(
          place.backend === 'sqlite' ? oldSqliteSchema(table) : oldPostgresSchema(`%s.${table}`),
        );
      await place.load(layout, table, {
        from: 0,
        to: rows,
        expiresFrom: Date.now() + DAY_MS,
        spreadMs: DAY_MS,
      });
      out[layout] = (await place.bytesOf(table)) / rows;
    } finally {
      await place.close();
    }
  }
  return out;
}

/** A ledger size's measurements, one number per round. */
interface Rung {
  readonly size: number;
  readonly newKey: number[];
  readonly newKeyCpu: number[];
  /** Replays of keys this run wrote (what retries mostly are: minutes after the first request). */
  readonly recent: number[];
  readonly recentCpu: number[];
  /** Replays of keys drawn from the whole bulk-loaded ledger (cold pages: the worst case). */
  readonly held: number[];
}

/**
 * One ledger per size, all open at once, so every round measures each size back to back
 * (interleaved: a noisy neighbour on the shared machine hits all sizes alike), in an order that
 * rotates from round to round (none always goes first).
 */
async function pointOps(
  make: () => Place,
  sizes: number[],
  ops: number,
  rounds: number,
): Promise<Rung[]> {
  const ladder = sizes.map((size) => ({
    size,
    place: make(),
    fresh: 0,
    newKey: [] as number[],
    newKeyCpu: [] as number[],
    recent: [] as number[],
    recentCpu: [] as number[],
    held: [] as number[],
  }));
  try {
    for (const rung of ladder) {
      await rung.place.store.ready?.();
      // As a ledger with a day's retention holds them: first seen over the last 23 hours, due
      // over the next 23 (none during the run). New keys then expire after every held one, as in
      // service: their expires_at index entries go at its end, not into the middle of it.
      if (rung.size > 0)
        await rung.place.load('current', 'oncely_ledger', {
          from: 0,
          to: rung.size,
          expiresFrom: Date.now() + HOUR_MS,
          spreadMs: DAY_MS - HOUR_MS,
        });
    }
    for (let r = 0; r < rounds; r++) {
      const order = ladder.map((_, i) => ladder[(i + r) % ladder.length]!);
      for (const rung of order) {
        const base = rung.fresh;
        const speed = await measure(rung.place.store, (i) => `new-${base + i}`, ops);
        rung.newKey.push(speed.opsPerSecond);
        rung.newKeyCpu.push(speed.cpuUs);
        rung.fresh += ops;
      }
      for (const rung of order) {
        const recent = (): string => `new-${Math.floor(Math.random() * rung.fresh)}`;
        const speed = await measure(rung.place.store, recent, ops);
        rung.recent.push(speed.opsPerSecond);
        rung.recentCpu.push(speed.cpuUs);
        if (rung.size === 0) continue;
        const held = (): string => benchKey(Math.floor(Math.random() * rung.size));
        rung.held.push((await measure(rung.place.store, held, ops)).opsPerSecond);
      }
    }
  } finally {
    for (const rung of ladder) await rung.place.close();
  }
  return ladder.map(({ size, newKey, newKeyCpu, recent, recentCpu, held }) => ({
    size,
    newKey,
    newKeyCpu,
    recent,
    recentCpu,
    held,
  }));
}

const USAGE = `node dist/bench/ledger-scale.js [options]
  --sizes LIST      receipts held for the point-op ladder, comma-separated (default ${DEFAULTS.sizes}; 10000000 takes long)
  --sweep N         expired receipts each sweep variant handles (default ${DEFAULTS.sweep}; 0 skips the sweep)
  --ops N           requests per point-op measurement (default ${DEFAULTS.ops})
  --rounds N        interleaved rounds per size; medians and spread are printed (default ${DEFAULTS.rounds})
  --bytes-rows N    rows loaded to measure bytes per receipt (default ${DEFAULTS.bytesRows})
  --only BACKEND    sqlite or postgres
  --pg URL          PostgreSQL (default ONCELY_TEST_POSTGRES_URL, else skipped)
  --parts LIST      which measurements: bytes, ops, sweep (default all)
  --window-ms N     length of the alternating sweep / no-sweep windows (default ${DEFAULTS.windowMs})
  --sweep-runs N    how many times the sweep is measured, each on a fresh database (default 1)
  --before          also sweep everything due in one unbounded step (SQLite: one transaction, as before)
  --sweep-step-ms N the sweep's time budget per step (default: the store's; 0 = fixed steps)
  --durability D    durable (default) or process: without an fsync per commit, the longest
                    write wait shows what the sweep holds up rather than what the disk does`;

async function main(): Promise<void> {
  const { values } = readBenchArgs('ledger-scale', USAGE, {
    options: {
      sizes: { type: 'string', default: DEFAULTS.sizes },
      sweep: { type: 'string', default: String(DEFAULTS.sweep) },
      ops: { type: 'string', default: String(DEFAULTS.ops) },
      rounds: { type: 'string', default: String(DEFAULTS.rounds) },
      'bytes-rows': { type: 'string', default: String(DEFAULTS.bytesRows) },
      only: { type: 'string' },
      pg: { type: 'string' },
      parts: { type: 'string', default: 'bytes,ops,sweep' },
      'window-ms': { type: 'string', default: String(DEFAULTS.windowMs) },
      'sweep-runs': { type: 'string', default: '1' },
      before: { type: 'boolean', default: false },
      'sweep-step-ms': { type: 'string' },
      durability: { type: 'string', default: 'durable' },
      help: { type: 'boolean', default: false },
    },
  });
  const whole = (name: string, text: string, min: number): number => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < min)
      exitOnBadArgs(
        'ledger-scale',
        `--${name} must be a whole number >= ${min}, got ${JSON.stringify(text)}`,
      );
    return n;
  };
  const sizes = values.sizes
    .split(',')
    .map((s) => whole('sizes', s.trim(), 0))
    .sort((a, b) => a - b);
  const sweepRows = whole('sweep', values.sweep, 0);
  const ops = whole('ops', values.ops, 1);
  const rounds = whole('rounds', values.rounds, 1);
  const bytesRows = whole('bytes-rows', values['bytes-rows'], 1);
  const windowMs = whole('window-ms', values['window-ms'], 100);
  const sweepRuns = whole('sweep-runs', values['sweep-runs'], 1);
  const stepMs =
    values['sweep-step-ms'] === undefined
      ? undefined
      : whole('sweep-step-ms', values['sweep-step-ms'], 0);
  if (values.only !== undefined && !(BACKENDS as readonly string[]).includes(values.only))
    exitOnBadArgs('ledger-scale', `--only must be sqlite or postgres, got ${values.only}`);
  const durability = values.durability as Durability;
  if (!DURABILITIES.includes(durability))
    exitOnBadArgs(
      'ledger-scale',
      `--durability must be ${DURABILITIES.join(' or ')}, got ${values.durability}`,
    );
  const pgUrl = values.pg ?? process.env['ONCELY_TEST_POSTGRES_URL'];
  const parts = new Set(values.parts.split(','));
  const backends = BACKENDS.filter(
    (b) => (values.only === undefined || values.only === b) && (b === 'sqlite' || pgUrl),
  );

  console.log(
    `bench/ledger-scale: sizes ${sizes.map(fmt).join(', ')}; ${ops} sequential requests per measurement, ${rounds} interleaved rounds; sweep of ${fmt(sweepRows)}`,
  );
  console.log(
    durability === 'durable'
      ? "  durability: durable, the stores' default (SQLite WAL, receipts FULL, claims NORMAL; PostgreSQL receipts synchronous, claims asynchronous)"
      : "  durability: process (SQLite synchronous = NORMAL, PostgreSQL synchronous_commit off: no fsync in a commit, so a write's wait is the sweep's and the CPU's, not the disk's)",
  );
  for (const backend of backends) {
    const make = (): Place =>
      backend === 'sqlite' ? sqlitePlace(durability) : postgresPlace(pgUrl!, durability);
    console.log(`\n## ${backend}`);
    if (parts.has('bytes')) {
      const bytes = await bytesPerReceipt(make, bytesRows);
      console.log(
        `bytes per receipt (${fmt(bytesRows)} rows, table + indexes): before ${fmt(bytes.before)}, now ${fmt(bytes.current)} (${(bytes.current / bytes.before).toFixed(2)}×)`,
      );
    }

    const ladder = parts.has('ops') ? await pointOps(make, sizes, ops, rounds) : [];
    const empty = ladder.find((r) => r.size === 0) ?? ladder[0];
    if (empty) {
      console.log(
        '| receipts held | new key ops/s (median, spread) | ratio | CPU µs | ratio | replay of recent keys ops/s | ratio | CPU µs | ratio | replay of random held keys ops/s | ratio to recent on empty |',
      );
      console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    }
    for (const r of ladder) {
      const ratio = (xs: number[], base: number[]) =>
        xs.length === 0 ? '-' : (median(xs) / median(base)).toFixed(2);
      const cell = (xs: number[]) => (xs.length === 0 ? '-' : `${fmt(median(xs))} (${spread(xs)})`);
      // CPU per request: the ratio is empty ÷ this size, so that, like ops/s, below 1 is slower.
      const cpu = (xs: number[], base: number[]) =>
        `${median(xs).toFixed(1)} | ${(median(base) / median(xs)).toFixed(2)}`;
      console.log(
        `| ${fmt(r.size)} | ${cell(r.newKey)} | ${ratio(r.newKey, empty!.newKey)} | ${cpu(r.newKeyCpu, empty!.newKeyCpu)} | ${cell(r.recent)} | ${ratio(r.recent, empty!.recent)} | ${cpu(r.recentCpu, empty!.recentCpu)} | ${cell(r.held)} | ${ratio(r.held, empty!.recent)} |`,
      );
    }

    if (sweepRows > 0 && parts.has('sweep')) {
      const ms = (n: number): string => n.toFixed(0);
      const cell = (w: WindowStats): string =>
        `${ms(w.p50Ms)} / ${ms(w.p99Ms)} / **${ms(w.maxMs)}** (${w.writes}; ${w.over100} > 100 ms${w.failed ? `; ${w.failed} failed` : ''})`;
      console.log(
        `\nsweep of ${fmt(sweepRows)} expired receipts in ${sweepRuns} run(s); writers at ${WRITES_PER_SECOND}/s in this process and in a second one; windows of ${windowMs} ms alternate: no sweep, sweep, …`,
      );
      console.log(
        '| run | sweep s | rows/s | steps (p50 / p99 / max ms) | writer | no sweep: write ms p50 / p99 / **max** (writes; over 100 ms) | sweeping: write ms p50 / p99 / **max** (writes; over 100 ms) |',
      );
      console.log('|---|---|---|---|---|---|---|');
      for (let run = 1; run <= sweepRuns; run++) {
        const r = await sweepInWindows(make, sweepRows, windowMs, stepMs);
        const head = `| ${run} | ${r.sweepSeconds.toFixed(1)} | ${fmt(r.swept.tombstoned / r.sweepSeconds)} | ${r.steps.count}: ${r.steps.p50Ms.toFixed(1)} / ${r.steps.p99Ms.toFixed(1)} / ${r.steps.maxMs.toFixed(1)}`;
        console.log(
          `${head} | this process | ${cell(r.quiet.inProcess)} | ${cell(r.sweeping.inProcess)} |`,
        );
        console.log(
          `| | | | | second process | ${cell(r.quiet.secondProcess)} | ${cell(r.sweeping.secondProcess)} |`,
        );
      }
      if (values.before) {
        const r = await sweepInOneTransaction(make, sweepRows);
        console.log(
          `everything due in one unbounded step (SQLite: the one transaction of before): ${r.seconds.toFixed(1)} s; longest write: this process ${ms(r.inProcess.maxMs)} ms, second process ${ms(r.secondProcess.maxMs)} ms`,
        );
      }
    }
  }
}

try {
  await main();
} finally {
  removePlaces();
}
