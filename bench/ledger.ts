/**
 * What the ledger costs a request: the same POST with the same effect (one INSERT) with no oncely
 * at all, and through oncely's middleware and ledger, on one node:http server, driven by
 * autocannon in one run. Variants, interleaved round by round (see SPECS):
 *   - bare:  no oncely: a plain node handler, the INSERT in autocommit on a connection of its own
 *            at the same durability (SQLite WAL + synchronous = FULL: one fsync per request;
 *            PostgreSQL: a pool, synchronous_commit on). The floor every ratio is taken against;
 *   - store: no key, but the INSERT in a transaction of oncely's store (it shares SQLite's group
 *            commit): an extra row, to separate what the store's commit saves from the rest;
 *   - keyed: a fresh Idempotency-Key per request: claim, effect + receipt in one transaction;
 *   - replay: one key for every request: the first runs, the rest are answered from the receipt;
 *   - bare-process, keyed-process: the same at 'process' durability (SQLite synchronous =
 *     NORMAL, PostgreSQL synchronous_commit off: survives a crash of the process, not of power);
 *   - bare-slow, keyed-slow: an awaited 50 ms call before the write, 20 connections.
 * Every row says its durability (docs/durability.md). Prints the median req/s, the spread over
 * the rounds and p99 for each, the ratio to its floor, and the effect rows each run added
 * (keyed: one per 2xx; replay: one in all).
 *
 *   npm run build && node dist/bench/ledger.js [--seconds 5] [--connections 10] [--rounds 1]
 *                                              [--pg URL] [--only sqlite|postgres]
 *                                              [--variants keyed,bare]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  busiestThreadUs,
  databaseBackends,
  threadCpu,
  type DatabaseBackends,
} from './ledger-cpu.js';
import {
  BENCH_TOKEN,
  type BenchDurability,
  type BenchTarget,
  type ClientMessage,
  type ServerMessage,
} from './ledger-protocol.js';
import { autocannon, type AutocannonRequest } from './autocannon.js';
import { readBenchArgs } from './bench-args.js';

/** The slow variants' awaited call before the effect's write, and their connections. */
const SLOW = { ms: 50, connections: 20 } as const;

/**
 * One measured variant: its route, how it keys its requests, the durability it runs at, and the
 * variant its ratio is taken against (the bare handler of the same durability and shape).
 */
interface VariantSpec {
  readonly path: string;
  readonly keys: 'none' | 'fresh' | 'one';
  readonly durability: BenchDurability;
  readonly slow: boolean;
  readonly floor: 'bare' | 'bare-process' | 'bare-slow';
  /** What the row is, for the table's last column. */
  readonly what: string;
}
const SPECS = {
  bare: {
    path: '/bare',
    keys: 'none',
    durability: 'durable',
    slow: false,
    floor: 'bare',
    what: 'no oncely: plain node handler, INSERT in autocommit (the floor)',
  },
  store: {
    path: '/store',
    keys: 'none',
    durability: 'durable',
    slow: false,
    floor: 'bare',
    what: "no key, INSERT in a transaction of oncely's store (group commit)",
  },
  keyed: {
    path: '/keyed',
    keys: 'fresh',
    durability: 'durable',
    slow: false,
    floor: 'bare',
    what: 'a new key each: claim, effect + receipt',
  },
  'keyed-deferred': {
    path: '/deferred',
    keys: 'fresh',
    durability: 'durable',
    slow: false,
    floor: 'bare',
    what: "a new key each, writes: 'deferred' (PostgreSQL: rows, then effects and COMMIT, concurrent requests grouped in one transaction)",
  },
  'keyed-deferred-alone': {
    path: '/deferred-alone',
    keys: 'fresh',
    durability: 'durable',
    slow: false,
    floor: 'bare',
    what: "the same, each request's commit alone (deferredGroups: { maxRequests: 1 })",
  },
  replay: {
    path: '/keyed',
    keys: 'one',
    durability: 'durable',
    slow: false,
    floor: 'bare',
    what: 'one key for all: answered from the receipt',
  },
  'bare-process': {
    path: '/bare?durability=process',
    keys: 'none',
    durability: 'process',
    slow: false,
    floor: 'bare-process',
    what: 'no oncely, process durability (the floor for process rows)',
  },
  'keyed-process': {
    path: '/keyed?durability=process',
    keys: 'fresh',
    durability: 'process',
    slow: false,
    floor: 'bare-process',
    what: 'a new key each, process durability',
  },
  'keyed-deferred-process': {
    path: '/deferred?durability=process',
    keys: 'fresh',
    durability: 'process',
    slow: false,
    floor: 'bare-process',
    what: "a new key each, writes: 'deferred', process durability",
  },
  'bare-slow': {
    path: `/bare?slow=${SLOW.ms}`,
    keys: 'none',
    durability: 'durable',
    slow: true,
    floor: 'bare-slow',
    what: `no oncely, an awaited ${SLOW.ms} ms call, ${SLOW.connections} connections`,
  },
  'keyed-slow': {
    path: `/keyed?slow=${SLOW.ms}`,
    keys: 'fresh',
    durability: 'durable',
    slow: true,
    floor: 'bare-slow',
    what: `a new key each, an awaited ${SLOW.ms} ms call, ${SLOW.connections} connections`,
  },
} as const satisfies Record<string, VariantSpec>;
type Variant = keyof typeof SPECS;
const VARIANTS = Object.keys(SPECS) as Variant[];
const BACKENDS = ['sqlite', 'postgres'] as const;
type Backend = (typeof BACKENDS)[number];

/** @default seconds 5, connections 10, rounds 1, warmup 1 s per variant */
const DEFAULTS = { seconds: 5, connections: 10, rounds: 1, warmupSeconds: 1 } as const;

export interface LedgerBenchRow {
  readonly backend: Backend;
  readonly variant: Variant;
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly statuses: Record<string, number>;
  readonly errors: number;
  /** Rows the run added to the effects table. */
  readonly effectRows: number;
  /** Lowest and highest req/s over the rounds (the median row is one of them or between). */
  readonly spread?: readonly [number, number];
  /** CPU µs of the server thread per request answered (Linux; NaN elsewhere). */
  readonly serverCpuUs: number;
  /** CPU µs of the server's PostgreSQL backends per request answered (NaN without them). */
  readonly databaseCpuUs: number;
}

class ServerThread {
  readonly #worker: Worker;
  readonly #waiting: Array<{
    resolve: (message: ServerMessage) => void;
    reject: (error: unknown) => void;
  }> = [];
  constructor(target: BenchTarget) {
    this.#worker = new Worker(new URL('./ledger-server.js', import.meta.url), {
      workerData: target,
    });
    this.#worker.on('message', (message: ServerMessage) => this.#waiting.shift()?.resolve(message));
    this.#worker.on('error', (error) => {
      const waiting = this.#waiting.splice(0);
      if (waiting.length === 0) console.error('bench/ledger: the server thread failed:', error);
      waiting.forEach((w) => w.reject(error));
    });
    // A thread that ends while a reply is awaited would otherwise leave this process nothing to
    // wait on: it would exit silently, with no rows and status 0.
    this.#worker.on('exit', (code) => {
      const error = new Error(`bench/ledger: the server thread exited (code ${code})`);
      this.#waiting.splice(0).forEach((w) => w.reject(error));
    });
  }
  next(): Promise<ServerMessage> {
    return new Promise((resolve, reject) => void this.#waiting.push({ resolve, reject }));
  }
  async ask(message: ClientMessage): Promise<ServerMessage> {
    const reply = this.next();
    this.#worker.postMessage(message);
    return reply;
  }
  async rows(): Promise<number> {
    const reply = await this.ask({ type: 'count' });
    return reply.type === 'count' ? reply.rows : Number.NaN;
  }
  async close(): Promise<void> {
    await this.ask({ type: 'close' });
    // The thread ends on its own once its server and pools are closed: a --cpu-prof profile of
    // it is written then (terminate() would lose it).
    await new Promise((resolve) => this.#worker.once('exit', resolve));
  }
}

let keyCounter = 0;

function requestsFor(variant: Variant, runId: string): AutocannonRequest[] {
  const spec: VariantSpec = SPECS[variant];
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_TOKEN}` };
  const request = {
    method: 'POST',
    path: spec.path,
    headers,
    body: JSON.stringify({ amount: 1, note: 'bench' }),
  };
  if (spec.keys === 'none') return [request];
  if (spec.keys === 'one')
    return [{ ...request, headers: { ...headers, 'idempotency-key': `${runId}-replayed` } }];
  // Each keyed request needs a key of its own: set one as every request is built.
  return [
    {
      ...request,
      setupRequest: (built) => ({
        ...built,
        headers: { ...built.headers, 'idempotency-key': `${runId}-${++keyCounter}` },
      }),
    },
  ];
}

async function runOne(
  server: ServerThread,
  url: string,
  backend: Backend,
  variant: Variant,
  seconds: number,
  connections: number,
  runId: string,
  backends: DatabaseBackends | undefined,
): Promise<LedgerBenchRow> {
  const before = await server.rows();
  const threadsBefore = threadCpu();
  const databaseBefore = await backends?.cpu();
  const result = await autocannon({
    url,
    connections: SPECS[variant].slow ? SLOW.connections : connections,
    duration: seconds,
    requests: requestsFor(variant, runId),
  });
  const serverUs = busiestThreadUs(threadsBefore, threadCpu());
  const databaseAfter = await backends?.cpu();
  const databaseUs =
    databaseBefore === undefined || databaseAfter === undefined
      ? Number.NaN
      : [...databaseAfter].reduce((sum, [pid, us]) => sum + us - (databaseBefore.get(pid) ?? 0), 0);
  const answered = result.requests.total;
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, Number(count)]),
  );
  return {
    backend,
    variant,
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    statuses,
    errors: result.errors,
    effectRows: (await server.rows()) - before,
    serverCpuUs: serverUs > 0 ? serverUs / answered : Number.NaN,
    databaseCpuUs: databaseUs / answered,
  };
}

export async function benchLedger(options: {
  seconds: number;
  connections: number;
  rounds: number;
  warmupSeconds: number;
  variants: readonly Variant[];
  backends: ReadonlyArray<{ backend: Backend; target: BenchTarget }>;
}): Promise<LedgerBenchRow[]> {
  const rows: LedgerBenchRow[] = [];
  for (const { backend, target } of options.backends) {
    const server = new ServerThread(target);
    const ready = await server.next();
    if (ready.type !== 'listening')
      throw new Error(`bench/ledger: the ${backend} server did not start`);
    const url = `http://127.0.0.1:${ready.port}`;
    const backends =
      target.kind === 'postgres'
        ? await databaseBackends(target.url, target.applicationName)
        : undefined;
    try {
      // Warm-up: JIT, prepared statements, pool connections. Not measured.
      for (const variant of options.warmupSeconds > 0 ? options.variants : [])
        await runOne(
          server,
          url,
          backend,
          variant,
          options.warmupSeconds,
          options.connections,
          `warm-${variant}`,
          backends,
        );
      const perVariant = new Map<Variant, LedgerBenchRow[]>(options.variants.map((v) => [v, []]));
      for (let round = 1; round <= options.rounds; round++) {
        for (const variant of options.variants) {
          progress(
            `${backend}: ${variant}, round ${round}/${options.rounds}, ${options.seconds} s`,
          );
          perVariant
            .get(variant)!
            .push(
              await runOne(
                server,
                url,
                backend,
                variant,
                options.seconds,
                options.connections,
                `r${round}-${variant}`,
                backends,
              ),
            );
        }
      }
      for (const variant of options.variants) rows.push(median(perVariant.get(variant)!));
    } finally {
      await backends?.close();
      await server.close();
    }
  }
  return rows;
}

/** The round with the median req/s (its p99 with it, so the pair comes from one run). */
function median(runs: LedgerBenchRow[]): LedgerBenchRow {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const middle = (values: number[]): number =>
    values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  return {
    ...sorted[Math.floor(runs.length / 2)]!,
    spread: [sorted[0]!.requestsPerSecond, sorted[sorted.length - 1]!.requestsPerSecond],
    // CPU per request: the median over the rounds on its own (it varies far less than req/s).
    serverCpuUs: middle(runs.map((r) => r.serverCpuUs)),
    databaseCpuUs: middle(runs.map((r) => r.databaseCpuUs)),
  };
}

function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`  … ${line}\n`);
}

const cpu = (us: number): string => (Number.isFinite(us) ? us.toFixed(0) : '–');

/** req/s of `row` over its floor's (the bare handler of the same durability and shape). */
function ratioOf(row: LedgerBenchRow, rows: readonly LedgerBenchRow[]): number {
  const floor = rows.find(
    (r) => r.backend === row.backend && r.variant === SPECS[row.variant].floor,
  );
  return floor ? row.requestsPerSecond / floor.requestsPerSecond : Number.NaN;
}

export function formatLedgerBench(rows: readonly LedgerBenchRow[]): string {
  // The variant column fits the longest name, so every column after it stays aligned.
  const variantWidth = Math.max('variant'.length, ...rows.map((r) => r.variant.length));
  const columns: ReadonlyArray<readonly [head: string, width: number, numeric?: true]> = [
    ['backend', 8],
    ['variant', variantWidth],
    ['durability', 10],
    ['req/s', 7, true],
    ['spread', 13],
    ['p99 ms', 7, true],
    ['÷ floor', 7, true],
    ['server µs', 9, true],
    ['db µs', 5, true],
    ['statuses', 24],
    ['effect rows', 11, true],
    ['what', 4],
  ];
  const last = columns.length - 1;
  /** A row: numbers right-aligned in their column, text left, the last cell as it is. */
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => {
        const [, width, numeric] = columns[i]!;
        if (i === last) return cell;
        return numeric ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ');
  const out = [
    columns.map(([head, width], i) => (i === last ? head : head.padEnd(width))).join('  '),
    columns.map(([, width]) => '-'.repeat(width)).join('  '),
  ];
  for (const row of rows) {
    const spec: VariantSpec = SPECS[row.variant];
    const statuses =
      Object.entries(row.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ') + (row.errors > 0 ? ` errors×${row.errors}` : '');
    const spread = row.spread ? `${row.spread[0].toFixed(0)}–${row.spread[1].toFixed(0)}` : '';
    out.push(
      line([
        row.backend,
        row.variant,
        spec.durability,
        row.requestsPerSecond.toFixed(0),
        spread,
        row.p99Ms.toFixed(1),
        `${ratioOf(row, rows).toFixed(2)}×`,
        cpu(row.serverCpuUs),
        cpu(row.databaseCpuUs),
        statuses,
        String(row.effectRows),
        spec.what,
      ]),
    );
  }
  const find = (backend: Backend, variant: Variant): LedgerBenchRow | undefined =>
    rows.find((r) => r.backend === backend && r.variant === variant);
  const targets: ReadonlyArray<readonly [Variant, string, number | undefined]> = [
    ['keyed', 'keyed ÷ bare (durable)', 0.85],
    ['keyed-deferred', "keyed, writes: 'deferred' ÷ bare (durable)", 0.85],
    ['replay', 'replay ÷ bare (durable)', 1.5],
    ['keyed-process', 'keyed ÷ bare (process)', undefined],
    [
      'keyed-slow',
      `slow effect (${SLOW.ms} ms awaited, ${SLOW.connections} connections): keyed ÷ bare`,
      0.8,
    ],
    ['store', 'store without a key ÷ bare (durable)', undefined],
  ];
  for (const backend of BACKENDS) {
    for (const [variant, label, target] of targets) {
      const row = find(backend, variant);
      if (!row) continue;
      const ratio = ratioOf(row, rows);
      const verdict =
        target === undefined
          ? ''
          : ratio >= target
            ? `  (target ≥ ${target}: met)`
            : `  (target ≥ ${target}: NOT met)`;
      const floor = find(backend, SPECS[variant].floor);
      const cost =
        floor && Number.isFinite(row.serverCpuUs) && Number.isFinite(floor.serverCpuUs)
          ? `; server CPU per request ${cpu(row.serverCpuUs)} µs vs ${cpu(floor.serverCpuUs)} µs`
          : '';
      out.push(`${backend}: ${label} = ${ratio.toFixed(2)}${verdict}${cost}`);
    }
  }
  return `${out.join('\n')}\n`;
}

const USAGE = `usage: node dist/bench/ledger.js [--seconds N] [--connections N] [--rounds N] [--pg URL] [--only sqlite|postgres]
  --seconds N       length of each measured run (default ${DEFAULTS.seconds})
  --warmup N        seconds of unmeasured warm-up per variant (default ${DEFAULTS.warmupSeconds}; 0 when
                    counting syscalls per request with strace)
  --connections N   autocannon connections (default ${DEFAULTS.connections})
  --rounds N        repeat every variant N times and keep each one's median run (default ${DEFAULTS.rounds})
  --pg URL          PostgreSQL to bench too (default: $ONCELY_TEST_POSTGRES_URL; none: SQLite only)
  --only BACKEND    sqlite or postgres
  --variants A,B    only these variants (default all: ${VARIANTS.join(',')}); for profiling one`;

async function main(): Promise<void> {
  const { values } = readBenchArgs('ledger', USAGE, {
    options: {
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      pg: { type: 'string' },
      only: { type: 'string' },
      variants: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const whole = (name: string, raw: unknown, fallback: number, min: number): number => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isSafeInteger(n) || n < min)
      throw new Error(
        `bench/ledger: --${name} must be a whole number >= ${min}, got ${String(raw)}`,
      );
    return n;
  };
  const seconds = whole('seconds', values.seconds, DEFAULTS.seconds, 1);
  const warmupSeconds = whole('warmup', values.warmup, DEFAULTS.warmupSeconds, 0);
  const connections = whole('connections', values.connections, DEFAULTS.connections, 1);
  const rounds = whole('rounds', values.rounds, DEFAULTS.rounds, 1);
  const only = values.only;
  if (only !== undefined && !(BACKENDS as readonly unknown[]).includes(only))
    throw new Error(`bench/ledger: --only must be sqlite or postgres, got ${String(only)}`);
  const variants =
    typeof values.variants === 'string'
      ? values.variants.split(',').map((v) => v.trim())
      : VARIANTS;
  const unknown = variants.filter((v) => !(VARIANTS as readonly string[]).includes(v));
  if (unknown.length > 0 || variants.length === 0)
    throw new Error(
      `bench/ledger: --variants takes names from ${VARIANTS.join(', ')}; got ${String(values.variants)}`,
    );
  const pgUrl =
    typeof values.pg === 'string'
      ? values.pg
      : process.env['ONCELY_TEST_POSTGRES_URL'] || undefined;

  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-ledger-'));
  try {
    const backends: Array<{ backend: Backend; target: BenchTarget }> = [];
    if (only !== 'postgres')
      backends.push({
        backend: 'sqlite',
        target: {
          kind: 'sqlite',
          file: join(dir, 'bench.db'),
          processFile: join(dir, 'process.db'),
        },
      });
    if (only !== 'sqlite' && pgUrl)
      backends.push({
        backend: 'postgres',
        target: {
          kind: 'postgres',
          url: pgUrl,
          schema: `oncely_bench_${process.pid}`,
          applicationName: `oncely-bench-${process.pid}`,
        },
      });
    console.log(
      `bench/ledger: POST with one INSERT as the effect; autocannon, ${connections} connections, ${seconds} s per run, ${rounds} round(s); server in a worker thread`,
    );
    console.log(
      '  durability: each row says its own. durable: SQLite synchronous = FULL, PostgreSQL synchronous_commit on; process: SQLite synchronous = NORMAL, PostgreSQL synchronous_commit off. The machine is shared: read the spread.',
    );
    console.log(
      pgUrl
        ? `  postgres: ${pgUrl.replace(/\/\/[^@/]*@/, '//…@')}, a schema of its own, pools of 10 (oncely's store, the bare handler)`
        : '  postgres: skipped (give --pg URL or set ONCELY_TEST_POSTGRES_URL)',
    );
    const rows = await benchLedger({
      seconds,
      connections,
      rounds,
      warmupSeconds,
      variants: variants as Variant[],
      backends,
    });
    process.stdout.write(`\n${formatLedgerBench(rows)}`);
    console.log(
      'floor: each ratio is over the bare row of the same durability and shape: the handler with no oncely, each INSERT committed on its own.',
    );
    console.log(
      'keyed: a claim (one statement) before the effect, whose transaction also writes the receipt; on SQLite concurrent requests share one COMMIT (one fsync).',
    );
    console.log(
      'replay: the first request runs; the others are answered from the stored receipt (a 409 + Retry-After while it is in flight).',
    );
    console.log(
      `effect rows: added by the run; the 2xx count plus up to ${connections} requests still in flight when autocannon stopped (replay: exactly 1).`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
