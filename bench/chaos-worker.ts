/**
 * bench/chaos's outbox worker: one process delivering intents from the PostgreSQL journal, as
 * `oncely outbox run --watch` does, on the library's public entry points. It prints `ready` once
 * its first pass reached the journal (the harness times a restart's recovery by it) and stops on
 * SIGTERM. Run by the harness: node dist/bench/chaos-worker.js '<WorkerConfig as JSON>'
 */
import { createOutboxWorker } from 'oncely';
import { createPostgresJournalStore, openPostgresPool } from 'oncely/stores/postgres';
import type { WorkerConfig } from './chaos-config.js';

async function main(config: WorkerConfig): Promise<void> {
  const pool = openPostgresPool(config.url, {
    max: 4,
    connectTimeoutMs: 2000,
    onError: () => undefined, // an idle connection lost with the server: the pool makes a new one
  });
  const store = createPostgresJournalStore({ pool });
  const stop = new AbortController();
  let ready = false;
  const worker = createOutboxWorker({
    store,
    owner: `${config.name}:${process.pid}`,
    leaseMs: config.leaseMs,
    batchSize: 32,
    pollMs: 50,
    onError: () => undefined, // the journal is down: run() tries again after pollMs
  });
  process.on('SIGTERM', () => stop.abort());
  const firstPass = async (): Promise<void> => {
    while (!ready && !stop.signal.aborted) {
      try {
        await store.nextDueAt(); // the journal answers (cheap at any size: the pending index)
        ready = true;
        process.stdout.write('ready\n');
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  await Promise.all([firstPass(), worker.run(stop.signal)]);
  await store.close();
  await pool.end();
}

await main(JSON.parse(process.argv[2] ?? '{}') as WorkerConfig);
