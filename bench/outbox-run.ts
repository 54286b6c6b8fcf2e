/**
 * bench/outbox's run: a receiver process, one worker process per contender, the recorders in this
 * process, and per round (contenders in a rotated order) for each contender:
 *   1. drain: N intents recorded (one commit each, RECORDERS at a time) while its worker idles,
 *      then `go`: the worker's and its PostgreSQL backends' CPU from `go` until every intent is
 *      delivered and the worker stopped, less what an empty start and stop costs it (measured in
 *      the warm-up). Wall throughput: N over `go` to the last arrival at the receiver;
 *   2. low load (not for no-op rows): one intent at a time, each after a random pause of up to
 *      GAP_MAX_MS (so a polling sender is met at every phase of its poll); record→first attempt;
 *   3. saturation: intents recorded open-loop at SATURATION_SHARE of the rate the drain reached,
 *      for `saturationSeconds`; record→first attempt of each.
 * The receiver (or, for no-op sends, the worker) counts every key: a key sent twice or never
 * shows in `checks`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SenderCpu, type CpuWindow } from './outbox-cpu.js';
import { OutboxChild } from './outbox-child.js';
import {
  engineOf,
  monotonicMs,
  onPostgres,
  type Contender,
  type Engine,
  type WorkerConfig,
} from './outbox-protocol.js';
import { createRecorder, type Recorder } from './outbox-recorders.js';

/** Intents recorded at once by the harness (each its own commit), as concurrent app requests. */
export const RECORDERS = 8;
/** Low-load pauses: as long as the longest poll among the senders (oncely's 1 s default). */
export const GAP_MAX_MS = 1000;
/** Saturation: arrivals at this share of the rate the same round's drain reached. */
export const SATURATION_SHARE = 0.8;
/** After a stop, before reading CPU: a completion still on its way is counted. */
const SETTLE_MS = 200;

export interface OutboxOptions {
  readonly intents: number;
  readonly rounds: number;
  readonly contenders: readonly Contender[];
  /** Without one, only the SQLite rows run. */
  readonly pgUrl: string | undefined;
  readonly lowLoadSamples: number;
  readonly saturationSeconds: number;
  readonly batchSize: number;
  readonly warmupIntents: number;
  /** Low-load pauses are random in [0, gapMaxMs). @default GAP_MAX_MS */
  readonly gapMaxMs?: number;
  /** Where oncely's worker processes write a V8 CPU profile (node --cpu-prof), if anywhere. */
  readonly cpuProfDir?: string | undefined;
  readonly progress: (line: string) => void;
}

export interface DrainRun {
  readonly contender: Contender;
  readonly round: number;
  readonly intents: number;
  /** Worker + backends, less the empty start and stop, µs. */
  readonly cpuUs: number;
  readonly raw: CpuWindow;
  readonly wallMs: number;
}

export interface DeliveryCheck {
  readonly contender: Contender;
  readonly set: string;
  readonly expected: number;
  readonly distinct: number;
  readonly requests: number;
}

export interface OutboxResult {
  readonly drains: DrainRun[];
  /** record→first attempt, ms, pooled over the rounds. */
  /**
   * Record→first attempt, ms: at low load from the record call (`low`) and from its return, the
   * intent committed (`lowFromCommit`: the wake-up alone, without the record's own fsync); at
   * saturation from the call.
   */
  readonly latency: Map<Contender, LatencySamples>;
  readonly checks: DeliveryCheck[];
  /** What an empty start and stop cost each worker (worker + backends, µs). */
  readonly startCostUs: Map<Contender, number>;
  /** Low load with the SQLite worker in the recording process (outbox-embedded.ts), pooled. */
  readonly embedded: Pick<LatencySamples, 'low' | 'lowFromCommit'>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Everything a run starts, so that `close` (also on Ctrl-C) ends and drops all of it. */
export class OutboxRig {
  readonly base = `obench${process.pid}`;
  readonly schema = `oncely_bench_outbox_${process.pid}`;
  readonly dir = mkdtempSync(join(tmpdir(), 'oncely-bench-outbox-'));
  receiver: OutboxChild | undefined;
  target = '';
  pool: pg.Pool | undefined;
  monitor: pg.Client | undefined;
  readonly workers = new Map<Contender, { child: OutboxChild; cpu: SenderCpu }>();
  readonly recorders = new Map<Engine, Recorder>();
  readonly #pgUrl: string | undefined;
  #closed = false;

  constructor(pgUrl: string | undefined) {
    this.#pgUrl = pgUrl;
  }

  urlFor(role: string): string {
    const url = new URL(this.#pgUrl!);
    url.searchParams.set('application_name', `${this.base}-${role}`);
    return url.toString();
  }

  async start(
    contenders: readonly Contender[],
    batchSize: number,
    cpuProfDir?: string,
  ): Promise<void> {
    this.receiver = new OutboxChild('receiver', new URL('./outbox-receiver.js', import.meta.url));
    this.target = (await this.receiver.next<{ type: string; url: string }>('listening')).url;
    if (this.#pgUrl !== undefined) {
      this.pool = new pg.Pool({ connectionString: this.urlFor('recorder'), max: RECORDERS + 2 });
      this.pool.on('error', (error) =>
        console.error('bench/outbox: recorder pool:', error.message),
      );
      this.pool.on('connect', (client) => client.on('error', () => undefined));
      this.monitor = new pg.Client({ connectionString: this.urlFor('monitor') });
      await this.monitor.connect();
    }
    const setup = {
      pool: this.pool!,
      pgUrl: this.#pgUrl === undefined ? '' : this.urlFor('recorder'),
      schema: this.schema,
      dir: this.dir,
      target: this.target,
    };
    for (const contender of contenders) {
      const { engine } = engineOf(contender);
      if (!this.recorders.has(engine))
        this.recorders.set(engine, await createRecorder(engine, setup));
      const config: WorkerConfig = {
        contender,
        pgUrl: onPostgres(contender) ? this.urlFor(contender) : '',
        schema: this.schema,
        dir: this.dir,
        target: this.target,
        batchSize,
      };
      const profiled = cpuProfDir !== undefined && contender.startsWith('oncely');
      const child = new OutboxChild(
        contender,
        new URL('./outbox-worker.js', import.meta.url),
        [JSON.stringify(config)],
        profiled
          ? [
              '--cpu-prof',
              '--cpu-prof-interval',
              '100',
              '--cpu-prof-dir',
              cpuProfDir,
              '--cpu-prof-name',
              `${contender}.cpuprofile`,
            ]
          : undefined,
      );
      await child.next('ready');
      const cpu = onPostgres(contender)
        ? new SenderCpu(child.process.pid!, this.monitor, `${this.base}-${contender}`)
        : new SenderCpu(child.process.pid!);
      this.workers.set(contender, { child, cpu });
    }
  }

  /** Ends every process, closes every connection, drops the schemas and the SQLite files. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.workers.values()].map(({ child }) => child.kill(true)));
    await this.receiver?.kill();
    for (const recorder of this.recorders.values()) await recorder.close().catch(() => undefined);
    if (this.pool) {
      for (const suffix of ['', '_gw', '_boss'])
        await this.pool
          .query(`DROP SCHEMA IF EXISTS "${this.schema}${suffix}" CASCADE`)
          .catch((error: unknown) => console.error('bench/outbox: drop schema:', error));
      await this.pool.end();
    }
    await this.monitor?.end();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The table (oncely), file (SQLite) or queue (pg-boss) a contender's round runs on. */
export const setName = (contender: Contender, round: number | string): string =>
  `${contender.replace(/-/g, '_')}_r${round}`;

/**
 * Records `keys` into `set`, RECORDERS at a time (each at `startAtMs(i)` or as soon as a lane is
 * free); when each record call began (monotonicMs): record→first attempt counts from the app's
 * call, as graphile-worker's "add_job to job execution start" does, and no sender's commit
 * acknowledgement (oncely's record also reads the row back) shifts it.
 */
export async function recordAll(
  recorder: Recorder,
  set: string,
  keys: readonly string[],
  startAtMs?: (i: number) => number,
): Promise<Map<string, number>> {
  const called = new Map<string, number>();
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < keys.length; i = next++) {
      const due = startAtMs?.(i);
      if (due !== undefined && due > monotonicMs()) await sleep(due - monotonicMs());
      called.set(keys[i]!, monotonicMs());
      await recorder.record(set, keys[i]!, JSON.stringify({ key: keys[i], n: i }));
    }
  };
  await Promise.all(Array.from({ length: RECORDERS }, lane));
  return called;
}

const keysOf = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Prepares `set` in the worker and the recorder. */
export async function prepareSet(rig: OutboxRig, contender: Contender, set: string): Promise<void> {
  await rig.workers.get(contender)!.child.ask({ type: 'prepare', set }, 'prepared');
  await rig.recorders.get(engineOf(contender).engine)!.prepare(set);
}

/** One drain of `n` intents (see the file's comment), with its delivery check. */
export async function drain(
  rig: OutboxRig,
  contender: Contender,
  set: string,
  n: number,
  startCostUs: number,
  round: number,
  tag = 'drain',
): Promise<{ run: DrainRun; check: DeliveryCheck }> {
  const { child, cpu } = rig.workers.get(contender)!;
  const counter = engineOf(contender).noop ? child : rig.receiver!;
  const prefix = `${set}.${tag}.`;
  await recordAll(rig.recorders.get(engineOf(contender).engine)!, set, keysOf(prefix, n));
  const window = await cpu.open();
  const done = counter.reached(prefix, n);
  const goAt = monotonicMs();
  await child.ask({ type: 'go', set }, 'started');
  const lastAt = await done;
  await child.ask({ type: 'stop' }, 'stopped');
  await sleep(SETTLE_MS);
  const raw = await window.close();
  const run: DrainRun = {
    contender,
    round,
    intents: n,
    cpuUs: raw.workerUs + raw.databaseUs - startCostUs,
    raw,
    wallMs: lastAt - goAt,
  };
  return { run, check: await checkSet(counter, contender, prefix, n) };
}

export async function checkSet(
  counter: OutboxChild,
  contender: Contender,
  prefix: string,
  expected: number,
): Promise<DeliveryCheck> {
  const arrivals = await counter.report(prefix);
  return {
    contender,
    set: prefix,
    expected,
    distinct: arrivals.length,
    requests: arrivals.reduce((sum, [, , count]) => sum + count, 0),
  };
}

/** CPU of a start and stop with nothing to send: subtracted from every drain of the contender. */
export async function startCost(
  rig: OutboxRig,
  contender: Contender,
  set: string,
): Promise<number> {
  const { child, cpu } = rig.workers.get(contender)!;
  const costs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const window = await cpu.open();
    await child.ask({ type: 'go', set }, 'started');
    await child.ask({ type: 'stop' }, 'stopped');
    await sleep(SETTLE_MS);
    const { workerUs, databaseUs } = await window.close();
    costs.push(workerUs + databaseUs);
  }
  return costs.sort((a, b) => a - b)[1]!;
}

export interface LatencySamples {
  low: number[];
  lowFromCommit: number[];
  saturated: number[];
}

/**
 * Low load: one intent at a time into `set`, each after a random pause; record→first attempt (ms)
 * from the call and from the record's return. Each intent's delivery check goes to `checks`.
 */
export async function lowLoad(
  rig: OutboxRig,
  recorder: Recorder,
  contender: Contender,
  set: string,
  options: OutboxOptions,
  checks: DeliveryCheck[],
): Promise<Pick<LatencySamples, 'low' | 'lowFromCommit'>> {
  const receiver = rig.receiver!;
  const low: number[] = [];
  const lowFromCommit: number[] = [];
  for (let i = 0; i < options.lowLoadSamples; i++) {
    await sleep(Math.random() * (options.gapMaxMs ?? GAP_MAX_MS));
    const prefix = `${set}.low${i}.`;
    const arrived = receiver.reached(prefix, 1);
    const key = `${prefix}0`;
    const calledAt = monotonicMs();
    await recorder.record(set, key, JSON.stringify({ key }));
    const committedAt = monotonicMs();
    const arrivedAt = await arrived;
    low.push(arrivedAt - calledAt);
    lowFromCommit.push(arrivedAt - committedAt);
    checks.push(await checkSet(receiver, contender, prefix, 1));
  }
  return { low, lowFromCommit };
}

/**
 * Low load, then saturation, on a running worker: record→first attempt (ms) of each intent, and
 * the delivery checks of both phases.
 */
export async function latencies(
  rig: OutboxRig,
  contender: Contender,
  set: string,
  drainRatePerS: number,
  options: OutboxOptions,
): Promise<LatencySamples & { checks: DeliveryCheck[] }> {
  const { child } = rig.workers.get(contender)!;
  const receiver = rig.receiver!;
  const recorder = rig.recorders.get(engineOf(contender).engine)!;
  const checks: DeliveryCheck[] = [];
  await child.ask({ type: 'go', set }, 'started');
  const { low, lowFromCommit } = await lowLoad(rig, recorder, contender, set, options, checks);
  const rate = drainRatePerS * SATURATION_SHARE;
  const m = Math.max(20, Math.min(options.intents, Math.round(rate * options.saturationSeconds)));
  const prefix = `${set}.sat.`;
  const all = receiver.reached(prefix, m);
  const startAt = monotonicMs();
  const called = await recordAll(
    recorder,
    set,
    keysOf(prefix, m),
    (i) => startAt + (i * 1000) / rate,
  );
  await all;
  await child.ask({ type: 'stop' }, 'stopped');
  const arrivals = await receiver.report(prefix);
  const saturated = arrivals.map(([key, firstAt]) => firstAt - called.get(key)!);
  checks.push(await checkSet(receiver, contender, prefix, m));
  return { low, lowFromCommit, saturated, checks };
}
