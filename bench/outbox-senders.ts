/**
 * The senders bench/outbox compares, as each one's own docs set it up for throughput. Each runs
 * in a worker process (bench/outbox-worker.ts) and consumes one set of intents at a time:
 * `start` begins, `stop` ends (the harness measures in between).
 */
import pg from 'pg';
import type { Runner } from 'graphile-worker';
import { createOutboxWorker, type JournalStore } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { engineOf, type WorkerConfig } from './outbox-protocol.js';

export interface Sender {
  /** Opens what a set needs before its intents are recorded (oncely: the journal's tables). */
  prepare(set: string): Promise<void>;
  /** Starts consuming `set`; resolves once consuming has begun. */
  start(set: string): Promise<void>;
  /** Stops consuming; resolves when nothing is in flight. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** What a job carries for graphile-worker and pg-boss (oncely keeps the whole send in its intent). */
export interface JobPayload {
  readonly key: string;
  readonly body: string;
}

/** Called with each job's key when sends are no-ops: the worker counts them instead of the receiver. */
export type OnHandled = (key: string) => void;

/** One POST with the key, as a user of a job queue would write it: fetch (undici, keep-alive). */
async function post(target: string, job: JobPayload): Promise<void> {
  const response = await fetch(target, {
    method: 'POST',
    body: job.body,
    headers: { 'content-type': 'application/json', 'idempotency-key': job.key },
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`status ${response.status}`);
}

/** The rivals are imported only by their own worker: an oncely worker's profile shows no module of theirs. */
export async function createSender(config: WorkerConfig, onHandled: OnHandled): Promise<Sender> {
  const { engine, noop } = engineOf(config.contender);
  if (engine === 'graphile-worker')
    return graphileSender(await import('graphile-worker'), config, noop, onHandled);
  if (engine === 'pg-boss') return pgBossSender((await import('pg-boss')).default, config);
  return oncelySender(config, engine, noop, onHandled);
}

/**
 * oncely: one outbox worker per set, its options at their defaults but `batchSize` (the harness
 * gives every batching sender the same). No-op sends go to a `deliver` hook that answers 200, in
 * place of the HTTP request (as graphile-worker's no-op job does nothing): what is left is the
 * claim with its attempts' starts, the policy's reading of the answer and the settlement.
 */
function oncelySender(
  config: WorkerConfig,
  engine: 'oncely-sqlite' | 'oncely-postgres',
  noop: boolean,
  onHandled: OnHandled,
): Sender {
  // Connections kept for the whole run (idleTimeoutMillis 0): none is opened inside a window.
  const pool =
    engine === 'oncely-postgres'
      ? new pg.Pool({ connectionString: config.pgUrl, max: 4, idleTimeoutMillis: 0 })
      : undefined;
  const stores = new Map<string, JournalStore<unknown>>();
  let running: { stop: AbortController; done: Promise<void> } | undefined;
  const storeOf = (set: string): JournalStore<unknown> => {
    let store = stores.get(set);
    if (!store) {
      store = (
        pool
          ? createPostgresJournalStore({ pool, schema: config.schema, table: set })
          : createSqliteJournalStore({
              database: () => openSqliteDatabase(`${config.dir}/${set}.db`),
            })
      ) as JournalStore<unknown>;
      stores.set(set, store);
    }
    return store;
  };
  const delivered = { status: 200 } as const;
  const noopDeliver = async (): Promise<typeof delivered> => delivered;
  return {
    prepare: (set) => storeOf(set).ready(),
    async start(set) {
      const stop = new AbortController();
      const worker = createOutboxWorker({
        store: storeOf(set),
        batchSize: config.batchSize,
        ...(noop
          ? {
              deliver: noopDeliver,
              onSettled: (event) => void (event.state === 'delivered' && onHandled(event.key)),
            }
          : {}),
      });
      running = { stop, done: worker.run(stop.signal) };
    },
    async stop() {
      running?.stop.abort();
      await running?.done;
      running = undefined;
    },
    async close() {
      for (const store of stores.values()) await store.close();
      await pool?.end();
    },
  };
}

/**
 * graphile-worker as its performance page sets it up for throughput
 * (https://worker.graphile.org/docs/performance: concurrentJobs 24, maxPoolSize 25, localQueue
 * { size: 500 }, completeJobBatchDelay 0, failJobBatchDelay 0), one instance (the page runs four
 * on a desktop; this machine has two cores). Its pool is made once and handed over (`pgPool`), so
 * a runner's start opens no connection inside a window. Jobs wake it by LISTEN/NOTIFY.
 */
function graphileSender(
  { Logger, run, runMigrations }: typeof import('graphile-worker'),
  config: WorkerConfig,
  noop: boolean,
  onHandled: OnHandled,
): Sender {
  const pgPool = new pg.Pool({ connectionString: config.pgUrl, max: 25, idleTimeoutMillis: 0 });
  // graphile-worker asks for both: an idle client's error would otherwise end the process.
  pgPool.on('error', (error) => console.error('graphile-worker pool:', error.message));
  pgPool.on('connect', (client) => client.on('error', () => undefined));
  const options = {
    pgPool,
    logger: new Logger(() => () => undefined),
    noHandleSignals: true,
    preset: {
      worker: {
        schema: `${config.schema}_gw`,
        concurrentJobs: 24,
        maxPoolSize: 25,
        localQueue: { size: 500 },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
      },
    },
  };
  const deliver = noop
    ? async (payload: unknown) => onHandled((payload as JobPayload).key)
    : async (payload: unknown) => post(config.target, payload as JobPayload);
  let runner: Runner | undefined;
  return {
    prepare: () => runMigrations(options),
    async start() {
      runner = await run({ ...options, taskList: { deliver } });
    },
    async stop() {
      await runner?.stop();
      runner = undefined;
    },
    close: () => pgPool.end(),
  };
}

/**
 * pg-boss 10 has no worker concurrency of its own (teamSize went in v10): its author's advice is
 * a batch per work() and the handler's own concurrency (Promise.allSettled over the batch,
 * https://github.com/timgit/pg-boss/issues/542), more work() calls for more pollers
 * (https://github.com/timgit/pg-boss/issues/483). A full batch calls notifyWorker, pg-boss's way
 * to skip the polling interval (0.5 s, its minimum) while a backlog lasts. Retries: its own
 * (retryLimit, default 2): a failed batch is retried whole. Maintenance (supervise) is off, as
 * oncely's worker runs no sweep either.
 */
function pgBossSender(PgBoss: typeof import('pg-boss'), config: WorkerConfig): Sender {
  const boss = new PgBoss({
    connectionString: config.pgUrl,
    schema: `${config.schema}_boss`,
    max: 10,
    idleTimeoutMillis: 0,
    supervise: false,
    schedule: false,
    migrate: false,
  } as ConstructorParameters<typeof PgBoss>[0]);
  boss.on('error', (error) => console.error('pg-boss:', error));
  const started = boss.start();
  let queue: string | undefined;
  const work = async (set: string): Promise<void> => {
    const id: string = await boss.work<JobPayload>(
      set,
      { batchSize: config.batchSize, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        const results = await Promise.allSettled(jobs.map((job) => post(config.target, job.data)));
        if (jobs.length === config.batchSize) boss.notifyWorker(id);
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw (failed as PromiseRejectedResult).reason;
      },
    );
  };
  return {
    prepare: async () => void (await started),
    async start(set) {
      queue = set;
      // Two pollers: a batch in flight on one while the other fetches the next.
      await Promise.all([work(set), work(set)]);
    },
    async stop() {
      if (queue !== undefined) await boss.offWork(queue);
      queue = undefined;
    },
    close: () => boss.stop({ graceful: false, wait: true }),
  };
}
