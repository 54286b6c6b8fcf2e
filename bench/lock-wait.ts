/**
 * How long a SQLite write waits for the file's write lock while another process takes it in
 * short bursts (a sweep's steps), two ways:
 *   - SQLite's busy handler (`busy_timeout`), what a better-sqlite3 app gets by default: it sleeps
 *     1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms between tries, synchronously, so the whole
 *     process stands still meanwhile;
 *   - oncely's SQLite store: `busy_timeout = 0` and a 1 ms poll in the event loop
 *     (src/stores/sqlite-driver/write-lock.ts).
 * A second process holds the lock in a duty cycle like the ledger sweeper's: a step of `--hold-ms`
 * (busy inserting), then a pause as long. This process writes at 50/s; a write's wait counts from
 * when it was due. Each variant also reports the event loop's longest delay: what every other
 * request of the process waited meanwhile. Variants alternate within each round; medians.
 *
 *   npm run build && node dist/bench/lock-wait.js [--seconds 5] [--rounds 3] [--hold-ms 20]
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { readBenchArgs, wholeArgOrExit } from './bench-args.js';

const WRITES_PER_SECOND = 50;
const VARIANTS = ['busy handler', 'oncely store'] as const;
type Variant = (typeof VARIANTS)[number];

interface VariantRun {
  readonly waits: number[];
  readonly loopMaxMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The other process: takes the lock for `holdMs` of inserts, lets it go for as long, until killed. */
async function holdInBursts(file: string, holdMs: number): Promise<never> {
  const db = openSqliteDatabase(file);
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare('INSERT INTO held (n) VALUES (?)');
  process.send?.('holding');
  for (let n = 0; ; ) {
    db.exec('BEGIN IMMEDIATE');
    const until = performance.now() + holdMs;
    while (performance.now() < until) insert.run(n++);
    db.exec('COMMIT');
    db.exec('DELETE FROM held');
    await sleep(holdMs);
  }
}

/** One variant's writes at a steady pace for `seconds`; each wait from when it was due. */
async function writeFor(variant: Variant, file: string, seconds: number): Promise<VariantRun> {
  const write = writer(variant, file);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const waits: number[] = [];
  const gapMs = 1000 / WRITES_PER_SECOND;
  const endAt = performance.now() + seconds * 1000;
  let dueAt = performance.now();
  while (dueAt < endAt) {
    await write.one(waits.length);
    const endedAt = performance.now();
    waits.push(endedAt - dueAt);
    dueAt = Math.max(dueAt + gapMs, endedAt);
    await sleep(Math.max(0, dueAt - performance.now()));
  }
  loop.disable();
  await write.close();
  return { waits, loopMaxMs: loop.max / 1e6 };
}

function writer(variant: Variant, file: string) {
  if (variant === 'busy handler') {
    const db = openSqliteDatabase(file);
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    const insert = db.prepare('INSERT INTO written (n) VALUES (?)');
    return {
      one: async (n: number) => {
        db.exec('BEGIN IMMEDIATE');
        insert.run(n);
        db.exec('COMMIT');
      },
      close: async () => void db.close(),
    };
  }
  const store = createSqliteStore({
    database: () => openSqliteDatabase(file),
    durability: 'process',
  });
  return {
    one: async (n: number) =>
      void (await store.write((tx) => tx.run('INSERT INTO written (n) VALUES (?)', n))),
    close: () => store.close(),
  };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const median = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

export async function runLockWaitBench(options: {
  seconds: number;
  rounds: number;
  holdMs: number;
}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-lock-wait-'));
  const file = join(dir, 'lock.db');
  const setup = openSqliteDatabase(file);
  setup.pragma('journal_mode = WAL');
  setup.exec('CREATE TABLE held (n INTEGER); CREATE TABLE written (n INTEGER)');
  setup.close();
  const holder = fork(fileURLToPath(import.meta.url), ['--holder', file, String(options.holdMs)]);
  await new Promise<void>((resolve, reject) => {
    holder.once('message', () => resolve());
    holder.once('exit', (code) => reject(new Error(`the holding process exited ${code}`)));
  });
  const runs = new Map<Variant, VariantRun[]>(VARIANTS.map((v) => [v, []]));
  try {
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order)
        runs.get(variant)!.push(await writeFor(variant, file, options.seconds));
    }
  } finally {
    holder.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = [
    `bench/lock-wait: writes at ${WRITES_PER_SECOND}/s while another process holds the write lock ${options.holdMs} ms, then lets it go ${options.holdMs} ms;`,
    `${options.rounds} round(s) of ${options.seconds} s per variant, interleaved; medians over rounds (spread).`,
    '',
    '| waiting | write wait p50 ms | p99 ms | max ms | writes over 100 ms | event loop max delay ms |',
    '|---|---|---|---|---|---|',
  ];
  const cell = (values: number[]) =>
    `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;
  for (const variant of VARIANTS) {
    const rs = runs.get(variant)!;
    const sorted = rs.map((r) => [...r.waits].sort((a, b) => a - b));
    lines.push(
      `| ${variant} | ${cell(sorted.map((s) => quantile(s, 0.5)))} | ${cell(sorted.map((s) => quantile(s, 0.99)))} | ${cell(sorted.map((s) => s.at(-1) ?? 0))} | ${cell(rs.map((r) => r.waits.filter((w) => w > 100).length))} | ${cell(rs.map((r) => r.loopMaxMs))} |`,
    );
  }
  const med = (variant: Variant, of: (run: VariantRun) => number) =>
    median(runs.get(variant)!.map(of));
  const longest = (run: VariantRun) => Math.max(...run.waits);
  lines.push(
    '',
    `busy handler ÷ oncely store: longest write wait ${(med('busy handler', longest) / med('oncely store', longest)).toFixed(2)}×, ` +
      `event loop's longest delay ${(med('busy handler', (r) => r.loopMaxMs) / med('oncely store', (r) => r.loopMaxMs)).toFixed(2)}× (> 1: oncely waits less)`,
  );
  return `${lines.join('\n')}\n`;
}

const USAGE = `usage: node dist/bench/lock-wait.js [--seconds N] [--rounds N] [--hold-ms N]
  How long a SQLite write waits for a lock another process takes in bursts: SQLite's busy
  handler against oncely's store (1 ms polls in the event loop).
  --seconds N   length of each variant's run (default 5)
  --rounds N    rounds, the variants alternating in each (default 3)
  --hold-ms N   how long the other process holds the lock, and then pauses (default 20)
  --help        this text`;

if (process.argv[2] === '--holder') {
  await holdInBursts(process.argv[3]!, Number(process.argv[4]));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = readBenchArgs('lock-wait', USAGE, {
    options: {
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      'hold-ms': { type: 'string' },
      help: { type: 'boolean' },
    },
  });

  process.stdout.write(
    await runLockWaitBench({
      seconds: wholeArgOrExit('lock-wait', 'seconds', values.seconds, 5),
      rounds: wholeArgOrExit('lock-wait', 'rounds', values.rounds, 3),
      holdMs: wholeArgOrExit('lock-wait', 'hold-ms', values['hold-ms'], 20),
    }),
  );
}
