/**
 * What the ledger costs a request: keyed against unkeyed POSTs on the same node:http server with
 * the same effect (one INSERT), driven by autocannon in one run. Five variants per backend,
 * interleaved round by round:
 *   - unkeyed: the effect in a transaction of its own; no key, no ledger (the floor);
 *   - keyed:   a fresh Idempotency-Key per request: claim, effect + receipt in one transaction;
 *   - replay:  one key for every request: the first runs, the rest are answered from the receipt;
 *   - unkeyed-slow, keyed-slow: the same with an awaited 50 ms call before the write, 20 connections.
 * Durable mode on both: SQLite (a real file, WAL, synchronous = FULL, group commit: concurrent
 * requests share one fsync); PostgreSQL when a URL is given (the effect + receipt commit
 * synchronously, the claim with synchronous_commit = off: one WAL flush per request).
 * See docs/durability.md. Prints the median req/s, the spread over the rounds and p99 for each,
 * the ratios, and the effect rows each run added (keyed: one per 2xx; replay: one in all).
 *
 *   npm run build && node dist/bench/ledger.js [--seconds 5] [--connections 10] [--rounds 1]
 *                                              [--pg URL] [--only sqlite|postgres]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import {
  BENCH_TOKEN,
  type BenchTarget,
  type ClientMessage,
  type ServerMessage,
} from './ledger-protocol.js';

/** The slice of autocannon@9's API used here (it ships no types). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const VARIANTS = ['unkeyed', 'keyed', 'replay', 'unkeyed-slow', 'keyed-slow'] as const;
/** The slow variants' awaited call before the effect's write, and their connections. */
const SLOW = { ms: 50, connections: 20 } as const;
type Variant = (typeof VARIANTS)[number];
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
    this.#worker.on('error', (error) => this.#waiting.splice(0).forEach((w) => w.reject(error)));
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
    await this.#worker.terminate();
  }
}

let keyCounter = 0;

function requestsFor(variant: Variant, runId: string): AutocannonRequest[] {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_TOKEN}` };
  const body = JSON.stringify({ amount: 1, note: 'bench' });
  if (variant === 'unkeyed') return [{ method: 'POST', path: '/unkeyed', headers, body }];
  if (variant === 'unkeyed-slow')
    return [{ method: 'POST', path: `/unkeyed?slow=${SLOW.ms}`, headers, body }];
  if (variant === 'keyed-slow') {
    return [
      {
        method: 'POST',
        path: `/keyed?slow=${SLOW.ms}`,
        headers,
        body,
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, 'idempotency-key': `${runId}-${++keyCounter}` },
        }),
      },
    ];
  }
  if (variant === 'replay')
    return [
      {
        method: 'POST',
        path: '/keyed',
        headers: { ...headers, 'idempotency-key': `${runId}-replayed` },
        body,
      },
    ];
  // Each keyed request needs a key of its own: set one as every request is built.
  return [
    {
      method: 'POST',
      path: '/keyed',
      headers,
      body,
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, 'idempotency-key': `${runId}-${++keyCounter}` },
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
): Promise<LedgerBenchRow> {
  const before = await server.rows();
  const result = await autocannon({
    url,
    connections: variant.endsWith('-slow') ? SLOW.connections : connections,
    duration: seconds,
    requests: requestsFor(variant, runId),
  });
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
  };
}

export async function benchLedger(options: {
  seconds: number;
  connections: number;
  rounds: number;
  backends: ReadonlyArray<{ backend: Backend; target: BenchTarget }>;
}): Promise<LedgerBenchRow[]> {
  const rows: LedgerBenchRow[] = [];
  for (const { backend, target } of options.backends) {
    const server = new ServerThread(target);
    const ready = await server.next();
    if (ready.type !== 'listening')
      throw new Error(`bench/ledger: the ${backend} server did not start`);
    const url = `http://127.0.0.1:${ready.port}`;
    try {
      // Warm-up: JIT, prepared statements, pool connections. Not measured.
      for (const variant of VARIANTS)
        await runOne(
          server,
          url,
          backend,
          variant,
          DEFAULTS.warmupSeconds,
          options.connections,
          `warm-${variant}`,
        );
      const perVariant = new Map<Variant, LedgerBenchRow[]>(VARIANTS.map((v) => [v, []]));
      for (let round = 1; round <= options.rounds; round++) {
        for (const variant of VARIANTS) {
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
              ),
            );
        }
      }
      for (const variant of VARIANTS) rows.push(median(perVariant.get(variant)!));
    } finally {
      await server.close();
    }
  }
  return rows;
}

/** The round with the median req/s (its p99 with it, so the pair comes from one run). */
function median(runs: LedgerBenchRow[]): LedgerBenchRow {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return {
    ...sorted[Math.floor(runs.length / 2)]!,
    spread: [sorted[0]!.requestsPerSecond, sorted[sorted.length - 1]!.requestsPerSecond],
  };
}

function progress(line: string): void {
  if (process.stderr.isTTY) process.stderr.write(`  … ${line}\n`);
}

export function formatLedgerBench(rows: readonly LedgerBenchRow[]): string {
  const out = [
    'backend   variant       req/s    spread         p99 ms   vs unkeyed   statuses                  effect rows',
    '--------  ------------  -------  -------------  -------  -----------  ------------------------  -----------',
  ];
  for (const row of rows) {
    const floor = rows.find(
      (r) =>
        r.backend === row.backend &&
        r.variant === (row.variant.endsWith('-slow') ? 'unkeyed-slow' : 'unkeyed'),
    );
    const ratio = floor ? row.requestsPerSecond / floor.requestsPerSecond : Number.NaN;
    const statuses =
      Object.entries(row.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ') + (row.errors > 0 ? ` errors×${row.errors}` : '');
    out.push(
      `${row.backend.padEnd(8)}  ${row.variant.padEnd(12)}  ${row.requestsPerSecond.toFixed(0).padStart(7)}  ${(row.spread ? `${row.spread[0].toFixed(0)}–${row.spread[1].toFixed(0)}` : '').padEnd(13)}  ${row.p99Ms.toFixed(1).padStart(7)}  ${`${ratio.toFixed(2)}×`.padStart(11)}  ${statuses.padEnd(24)}  ${String(row.effectRows).padStart(11)}`,
    );
  }
  for (const backend of BACKENDS) {
    const keyed = rows.find((r) => r.backend === backend && r.variant === 'keyed');
    const unkeyed = rows.find((r) => r.backend === backend && r.variant === 'unkeyed');
    if (keyed && unkeyed) {
      out.push(
        `${backend}: keyed/unkeyed = ${(keyed.requestsPerSecond / unkeyed.requestsPerSecond).toFixed(2)} (req/s), p99 ${keyed.p99Ms.toFixed(1)} ms vs ${unkeyed.p99Ms.toFixed(1)} ms`,
      );
    }
    const replay = rows.find((r) => r.backend === backend && r.variant === 'replay');
    if (replay && unkeyed)
      out.push(
        `${backend}: replay/unkeyed = ${(replay.requestsPerSecond / unkeyed.requestsPerSecond).toFixed(2)}`,
      );
    const keyedSlow = rows.find((r) => r.backend === backend && r.variant === 'keyed-slow');
    const unkeyedSlow = rows.find((r) => r.backend === backend && r.variant === 'unkeyed-slow');
    if (keyedSlow && unkeyedSlow) {
      out.push(
        `${backend}: slow effect (${SLOW.ms} ms awaited, ${SLOW.connections} connections): keyed/unkeyed = ${(keyedSlow.requestsPerSecond / unkeyedSlow.requestsPerSecond).toFixed(2)}`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}

const USAGE = `usage: node dist/bench/ledger.js [--seconds N] [--connections N] [--rounds N] [--pg URL] [--only sqlite|postgres]
  --seconds N       length of each measured run (default ${DEFAULTS.seconds})
  --connections N   autocannon connections (default ${DEFAULTS.connections})
  --rounds N        repeat the three variants N times and keep each one's median run (default ${DEFAULTS.rounds})
  --pg URL          PostgreSQL to bench too (default: $ONCELY_TEST_POSTGRES_URL; none: SQLite only)
  --only BACKEND    sqlite or postgres`;

async function main(): Promise<void> {
  // Not strict: `npm run bench -- --rounds 3` hands every benchmark the same arguments.
  const { values } = parseArgs({
    strict: false,
    options: {
      seconds: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      pg: { type: 'string' },
      only: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return void console.log(USAGE);
  const whole = (name: string, raw: unknown, fallback: number, min: number): number => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isSafeInteger(n) || n < min)
      throw new Error(
        `bench/ledger: --${name} must be a whole number >= ${min}, got ${String(raw)}`,
      );
    return n;
  };
  const seconds = whole('seconds', values.seconds, DEFAULTS.seconds, 1);
  const connections = whole('connections', values.connections, DEFAULTS.connections, 1);
  const rounds = whole('rounds', values.rounds, DEFAULTS.rounds, 1);
  const only = values.only;
  if (only !== undefined && !(BACKENDS as readonly unknown[]).includes(only))
    throw new Error(`bench/ledger: --only must be sqlite or postgres, got ${String(only)}`);
  const pgUrl =
    typeof values.pg === 'string'
      ? values.pg
      : process.env['ONCELY_TEST_POSTGRES_URL'] || undefined;

  const dir = mkdtempSync(join(tmpdir(), 'oncely-bench-ledger-'));
  try {
    const backends: Array<{ backend: Backend; target: BenchTarget }> = [];
    if (only !== 'postgres')
      backends.push({ backend: 'sqlite', target: { kind: 'sqlite', file: join(dir, 'bench.db') } });
    if (only !== 'sqlite' && pgUrl)
      backends.push({
        backend: 'postgres',
        target: { kind: 'postgres', url: pgUrl, schema: `oncely_bench_${process.pid}` },
      });
    console.log(
      `bench/ledger: POST with one INSERT as the effect; autocannon, ${connections} connections, ${seconds} s per run, ${rounds} round(s); server in a worker thread`,
    );
    console.log(
      '  durability: durable on both (SQLite synchronous = FULL with group commit; PostgreSQL synchronous commit of the effect + receipt). The machine is shared: read the spread.',
    );
    console.log(
      pgUrl
        ? `  postgres: ${pgUrl.replace(/\/\/[^@/]*@/, '//…@')}, a schema of its own, pool of 10`
        : '  postgres: skipped (give --pg URL or set ONCELY_TEST_POSTGRES_URL)',
    );
    const rows = await benchLedger({ seconds, connections, rounds, backends });
    process.stdout.write(`\n${formatLedgerBench(rows)}`);
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
