/**
 * bench/outbox's embedded row: the SQLite journal's worker in the recording process, as an app
 * runs it beside its own code (docs/outbox.md: one store, the worker woken in process, no file
 * event between them). Low load only, measured as the cross-process row's (outbox-run.ts
 * `latencies`): one intent at a time after a random pause, record call → the receiver's first
 * arrival. Its CPU is the app's, so it has no drain row; a warm-up drain compiles its code first.
 */
import { createJournal, createOutboxWorker, type JournalStore } from 'oncely';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import {
  checkSet,
  lowLoad,
  recordAll,
  type DeliveryCheck,
  type LatencySamples,
  type OutboxOptions,
  type OutboxRig,
} from './outbox-run.js';
import type { Recorder } from './outbox-recorders.js';

/**
 * One round of the embedded row on a file of its own: a warm-up drain, then `lowLoadSamples`
 * intents one at a time. The worker and the journal share one store (one connection).
 */
export async function embeddedLowLoad(
  rig: OutboxRig,
  round: number,
  options: OutboxOptions,
): Promise<Pick<LatencySamples, 'low' | 'lowFromCommit'> & { checks: DeliveryCheck[] }> {
  const set = `embedded_r${round}`;
  const store = createSqliteJournalStore({
    database: () => openSqliteDatabase(`${rig.dir}/${set}.db`),
  }) as JournalStore<unknown>;
  await store.ready();
  const journal = createJournal({ store });
  const recorder: Recorder = {
    prepare: async () => undefined,
    record: async (_set, key, body) =>
      void (await journal.record({
        key,
        target: rig.target,
        body,
        headers: { 'content-type': 'application/json' },
      })),
    close: async () => undefined,
  };
  const stop = new AbortController();
  const worker = createOutboxWorker({ store, batchSize: options.batchSize });
  const running = worker.run(stop.signal);
  const receiver = rig.receiver!;
  const checks: DeliveryCheck[] = [];
  try {
    const warm = Math.min(options.warmupIntents, 300);
    const warmed = receiver.reached(`${set}.warm.`, warm);
    await recordAll(recorder, set, keysOf(`${set}.warm.`, warm));
    await warmed;
    checks.push(await checkSet(receiver, 'oncely-sqlite', `${set}.warm.`, warm));
    const { low, lowFromCommit } = await lowLoad(
      rig,
      recorder,
      'oncely-sqlite',
      set,
      options,
      checks,
    );
    return { low, lowFromCommit, checks };
  } finally {
    stop.abort();
    await running;
    await journal.close();
  }
}

const keysOf = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}`);
