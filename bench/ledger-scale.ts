/**
 * The ledger at scale, on SQLite and PostgreSQL, in one process run:
 *   1. bytes per receipt: the same rows in today's layout and in the layout before (rowid table,
 *      hex fingerprint, JSON headers, tombstones in place);
 *   2. new-key and replay ops/s with 0, 1M (… 10M) receipts held, rounds interleaved, median and
 *      spread, and the ratio at N ÷ empty;
 *   3. a sweep of N expired receipts, bounded steps (the ledger's sweeper) against one unbounded
 *      transaction (what the sweep did before), with new-key writers running throughout, one in
 *      this process and one in a second process: the longest write stall of each.
 * Rows are bulk-loaded with SQL (bench/ledger-scale-load.ts), never through HTTP. Durability: the
 * stores' defaults (SQLite WAL at synchronous = FULL with group commit; PostgreSQL
 * receipts with synchronous commit, claims asynchronous).
 *
 *   npm run build && node dist/bench/ledger-scale.js [--sizes 0,1000000,10000000] [--sweep 1000000]
 *        [--ops 1000] [--rounds 3] [--bytes-rows 200000] [--only sqlite|postgres] [--pg URL]
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  createLedger,
  jsonReceipt,
  type LedgerStore,
  type SweepResult,
} from '../src/ledger/index.js';
import { createPostgresStore, type PgPool } from '../src/stores/postgres/index.js';
import {
  createSqliteStore,
  openSqliteDatabase,
  type SqliteDatabase,
} from '../src/stores/sqlite/index.js';
import {
  BENCH_FINGERPRINT,
  BENCH_SCOPE,
  benchKey,
  loadPostgres,
  loadSqlite,
  oldPostgresSchema,
  oldSqliteSchema,
  type Layout,
} from './ledger-scale-load.js';
import {
  WRITES_PER_SECOND,
  writeUntil,
  type WriterReport,
  type WriterTarget,
} from './ledger-scale-writer.js';

const BACKENDS = ['sqlite', 'postgres'] as const;
type Backend = (typeof BACKENDS)[number];
const DEFAULTS = {
  sizes: '0,1000000',
  sweep: 1_000_000,
  ops: 1000,
  rounds: 3,
  bytesRows: 200_000,
} as const;
const DAY_MS = 86_400_000;

/** One backend's database: a SQLite file, or a PostgreSQL schema of its own. */
interface Place {
  readonly backend: Backend;
  readonly target: WriterTarget;
  readonly store: LedgerStore<unknown>;
  /** Bulk-loads keys [from, to) into the live table. */
  load(
    layout: Layout,
    table: string,
    range: { from: number; to: number; expiresFrom: number; spreadMs: number },
  ): Promise<void>;
  /** Bytes the table and its indexes take (SQLite: pages of the file it lives in alone). */
  bytesOf(table: string): Promise<number>;
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'oncely-scale-'));
let places = 0;

function sqlitePlace(): Place {
  const file = join(dir, `scale-${++places}.db`);
  const db = openSqliteDatabase(file);
  const store = createSqliteStore({ database: db, busyTimeoutMs: 30_000 });
  const pageBytes = (): number => {
    db.pragma('wal_checkpoint(TRUNCATE)');
    return (
      Number(db.pragma('page_count', { simple: true })) *
      Number(db.pragma('page_size', { simple: true }))
    );
  };
  return {
    backend: 'sqlite',
    target: { backend: 'sqlite', where: file },
    store: store as LedgerStore<unknown>,
    load: async (layout, table, range) => loadSqlite(db, table, layout, range, progress),
    // The size of the table and its indexes, read from the dbstat virtual table.
    bytesOf: async (table) => {
      pageBytes();
      const row = db
        .prepare(
          `SELECT sum(pgsize) AS n FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)`,
        )
        .get(table, table) as { n: number };
      return Number(row.n);
    },
    exec: async (sql) => void db.exec(sql),
    close: async () => {
      await store.close();
      (db as SqliteDatabase).close();
    },
  };
}

function postgresPlace(url: string): Place {
  const schema = `oncely_scale_${process.pid}_${++places}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const store = createPostgresStore({ pool: pool as unknown as PgPool, schema });
  return {
    backend: 'postgres',
    target: { backend: 'postgres', where: url, schema },
    store: store as LedgerStore<unknown>,
    load: (layout, table, range) =>
      loadPostgres(pool, `"${schema}".${table}`, layout, range, progress),
    bytesOf: async (table) => {
      await pool.query(`VACUUM ANALYZE "${schema}".${table}`);
      return Number(
        (await pool.query('SELECT pg_total_relation_size($1) AS n', [`"${schema}".${table}`]))
          .rows[0].n,
      );
    },
    exec: async (sql) => void (await pool.query(sql.replaceAll('%s', `"${schema}"`))),
    close: async () => {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

function progress(written: number): void {
  if (process.stderr.isTTY)
    process.stderr.write(`\r  loaded ${written.toLocaleString('en')} rows   `);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]): string =>
  `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
const fmt = (n: number): string => Math.round(n).toLocaleString('en');

/** Sequential ledger requests, like one client at a time: ops/s. */
async function opsPerSecond(
  store: LedgerStore<unknown>,
  keys: (i: number) => string,
  ops: number,
): Promise<number> {
  const ledger = createLedger({ store });
  const started = performance.now();
  for (let i = 0; i < ops; i++) {
    const result = await ledger.execute(
      { scope: BENCH_SCOPE, key: keys(i), fingerprint: BENCH_FINGERPRINT },
      () => jsonReceipt(201, { ok: true }),
    );
    if (result.kind !== 'executed' && result.kind !== 'replayed')
      throw new Error(`bench request answered ${result.kind}`);
  }
  return ops / ((performance.now() - started) / 1000);
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

/**
 * One ledger per size, all open at once, so every round measures each size back to back
 * (interleaved: a noisy neighbour on the shared machine hits all sizes alike).
 */
async function pointOps(
  make: () => Place,
  sizes: number[],
  ops: number,
  rounds: number,
): Promise<Array<{ size: number; newKey: number[]; replay: number[] }>> {
  const ladder = sizes.map((size) => ({
    size,
    place: make(),
    fresh: 0,
    newKey: [] as number[],
    replay: [] as number[],
  }));
  try {
    for (const rung of ladder) {
      await rung.place.store.ready?.();
      if (rung.size > 0)
        await rung.place.load('current', 'oncely_ledger', {
          from: 0,
          to: rung.size,
          expiresFrom: Date.now() + DAY_MS,
          spreadMs: DAY_MS,
        });
    }
    for (let r = 0; r < rounds; r++) {
      for (const rung of ladder) {
        const base = rung.fresh;
        rung.newKey.push(await opsPerSecond(rung.place.store, (i) => `new-${base + i}`, ops));
        rung.fresh += ops;
      }
      for (const rung of ladder) {
        // Replays of keys spread over the whole ledger (random pages); the empty one has only its new keys.
        const pick = (): string =>
          rung.size > 0
            ? benchKey(Math.floor(Math.random() * rung.size))
            : `new-${Math.floor(Math.random() * rung.fresh)}`;
        rung.replay.push(await opsPerSecond(rung.place.store, pick, ops));
      }
    }
  } finally {
    for (const rung of ladder) await rung.place.close();
  }
  return ladder.map(({ size, newKey, replay }) => ({ size, newKey, replay }));
}

interface SweepRun {
  readonly variant: 'no sweep (baseline, 3 s)' | 'bounded steps' | 'one transaction';
  readonly seconds: number;
  readonly swept: number;
  readonly inProcess: WriterReport;
  readonly secondProcess: WriterReport;
}

async function sweepWithWriters(
  make: () => Place,
  rows: number,
  variant: SweepRun['variant'],
): Promise<SweepRun> {
  const place = make();
  try {
    await place.store.ready?.();
    const now = Date.now();
    await place.load('current', 'oncely_ledger', {
      from: 0,
      to: rows,
      expiresFrom: now - 3_600_000,
      spreadMs: 3_600_000,
    });
    const child = fork(
      new URL('./ledger-scale-writer.js', import.meta.url),
      ['--child', JSON.stringify(place.target)],
      { stdio: 'inherit' },
    );
    const childReport = new Promise<WriterReport>((resolve, reject) => {
      child.on('message', (m) => typeof m === 'object' && resolve(m as WriterReport));
      child.on('exit', (code) => code !== 0 && reject(new Error(`writer process exited ${code}`)));
    });
    await new Promise<void>((resolve) => child.on('message', (m) => m === 'writing' && resolve()));
    let done = false;
    const writer = writeUntil(place.store, 'first', () => done);
    const started = performance.now();
    const ledger = createLedger({ store: place.store });
    let swept: SweepResult = { tombstoned: 0, deleted: 0, busy: true };
    if (variant === 'bounded steps') swept = await ledger.purgeExpired();
    else if (variant === 'one transaction') {
      // Everything due in one transaction, as the sweep did before; retried while another process writes.
      while (swept.busy) swept = await place.store.sweep(Date.now(), ledger.options.tombstoneMs);
    } else await new Promise((resolve) => setTimeout(resolve, 3000));
    const seconds = (performance.now() - started) / 1000;
    done = true;
    child.send('stop');
    const [inProcess, secondProcess] = await Promise.all([writer, childReport]);
    return { variant, seconds, swept: swept.tombstoned, inProcess, secondProcess };
  } finally {
    await place.close();
  }
}

const USAGE = `node dist/bench/ledger-scale.js [options]
  --sizes LIST      receipts held for the point-op ladder, comma-separated (default ${DEFAULTS.sizes}; 10000000 takes long)
  --sweep N         expired receipts each sweep variant handles (default ${DEFAULTS.sweep}; 0 skips the sweep)
  --ops N           requests per point-op measurement (default ${DEFAULTS.ops})
  --rounds N        interleaved rounds per size; medians and spread are printed (default ${DEFAULTS.rounds})
  --bytes-rows N    rows loaded to measure bytes per receipt (default ${DEFAULTS.bytesRows})
  --only BACKEND    sqlite or postgres
  --pg URL          PostgreSQL (default ONCELY_TEST_POSTGRES_URL, else skipped)
  --parts LIST      which measurements: bytes, ops, sweep (default all)`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: DEFAULTS.sizes },
      sweep: { type: 'string', default: String(DEFAULTS.sweep) },
      ops: { type: 'string', default: String(DEFAULTS.ops) },
      rounds: { type: 'string', default: String(DEFAULTS.rounds) },
      'bytes-rows': { type: 'string', default: String(DEFAULTS.bytesRows) },
      only: { type: 'string' },
      pg: { type: 'string' },
      parts: { type: 'string', default: 'bytes,ops,sweep' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  const whole = (name: string, text: string, min: number): number => {
    const n = Number(text);
    if (!Number.isSafeInteger(n) || n < min)
      throw new Error(`--${name} must be a whole number >= ${min}, got ${JSON.stringify(text)}`);
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
  if (values.only !== undefined && !(BACKENDS as readonly string[]).includes(values.only))
    throw new Error(`--only must be sqlite or postgres, got ${values.only}`);
  const pgUrl = values.pg ?? process.env['ONCELY_TEST_POSTGRES_URL'];
  const parts = new Set(values.parts.split(','));
  const backends = BACKENDS.filter(
    (b) => (values.only === undefined || values.only === b) && (b === 'sqlite' || pgUrl),
  );

  console.log(
    `bench/ledger-scale: sizes ${sizes.map(fmt).join(', ')}; ${ops} sequential requests per measurement, ${rounds} interleaved rounds; sweep of ${fmt(sweepRows)}`,
  );
  console.log(
    '  durability: store defaults (SQLite WAL, receipts FULL, claims NORMAL; PostgreSQL receipts synchronous, claims asynchronous)',
  );
  for (const backend of backends) {
    const make = (): Place => (backend === 'sqlite' ? sqlitePlace() : postgresPlace(pgUrl!));
    console.log(`\n## ${backend}`);
    if (parts.has('bytes')) {
      const bytes = await bytesPerReceipt(make, bytesRows);
      console.log(
        `bytes per receipt (${fmt(bytesRows)} rows, table + indexes): before ${fmt(bytes.before)}, now ${fmt(bytes.current)} (${(bytes.current / bytes.before).toFixed(2)}×)`,
      );
    }

    const ladder = parts.has('ops') ? await pointOps(make, sizes, ops, rounds) : [];
    const empty = ladder.find((r) => r.size === 0) ?? ladder[0];
    if (empty)
      console.log(
        '| receipts held | new key ops/s (median, spread) | ratio | replay ops/s (median, spread) | ratio |',
      );
    if (empty) console.log('|---|---|---|---|---|');
    for (const r of ladder) {
      const ratio = (xs: number[], base: number[]) => (median(xs) / median(base)).toFixed(2);
      console.log(
        `| ${fmt(r.size)} | ${fmt(median(r.newKey))} (${spread(r.newKey)}) | ${ratio(r.newKey, empty!.newKey)} | ${fmt(median(r.replay))} (${spread(r.replay)}) | ${ratio(r.replay, empty!.replay)} |`,
      );
    }

    if (sweepRows > 0 && parts.has('sweep')) {
      const runs: SweepRun[] = [];
      for (const variant of [
        'no sweep (baseline, 3 s)',
        'bounded steps',
        'one transaction',
      ] as const)
        runs.push(
          await sweepWithWriters(
            make,
            variant === 'no sweep (baseline, 3 s)' ? 0 : sweepRows,
            variant,
          ),
        );
      console.log(
        `| sweep of ${fmt(sweepRows)} expired, writers at ${WRITES_PER_SECOND}/s each | seconds | rows/s | longest write stall, this process (ms) | writes | longest stall, second process (ms) | writes |`,
      );
      console.log('|---|---|---|---|---|---|---|');
      for (const s of runs) {
        console.log(
          `| ${s.variant} | ${s.seconds.toFixed(1)} | ${s.swept === 0 ? '-' : fmt(s.swept / s.seconds)} | ${s.inProcess.maxStallMs.toFixed(0)} | ${s.inProcess.writes} | ${s.secondProcess.maxStallMs.toFixed(0)} | ${s.secondProcess.writes} (${s.secondProcess.errors} not executed) |`,
        );
      }
    }
  }
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
