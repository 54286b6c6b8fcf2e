/**
 * bench/chaos's application: it records intents in the PostgreSQL journal in batches, one
 * transaction each, as an application's outbox does with its own writes. An intent is
 * acknowledged once its COMMIT answered: those are the ones that must be delivered. It keeps at
 * most BACKLOG intents unsettled, and stops at `ceiling` until the fault plan moves it on.
 */
import { createJournal, type IntentInput } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import type { ChaosSystem } from './chaos-system.js';

/** Intents recorded and not yet settled, at most: the producer waits above it. */
const BACKLOG = 200;
const RECORD_BATCH = 50;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface Producer {
  /** Acknowledged intents, by key: which ledger they go to. */
  readonly acknowledged: Map<string, 'postgres' | 'sqlite'>;
  /** The fault plan's index active when each was acknowledged (-1: before any fault). */
  readonly phaseOf: Map<string, number>;
  /** Set by the run: no intent is recorded past it. */
  ceiling: number;
  /** Set by the run: the latest fault's index. */
  phase: number;
  /** Set by the run's watch: intents no longer pending. */
  settled: number;
  /** False once every intent is recorded (or the time is up). */
  readonly producing: boolean;
  readonly done: Promise<void>;
}

export function startProducer(
  system: ChaosSystem,
  options: { readonly intents: number; readonly seed: number; readonly endsAt: number },
): Producer {
  const journal = createJournal({ store: createPostgresJournalStore({ pool: system.pool }) });
  const intentOf = (i: number) => {
    const key = `intent-${options.seed}-${i}`;
    const where: 'postgres' | 'sqlite' = i % 3 === 2 ? 'sqlite' : 'postgres';
    const input: IntentInput = {
      key,
      target: system.targets[where],
      body: JSON.stringify({ i }),
      headers: { 'content-type': 'application/json' },
      // No intent may give up during an outage: the budget is the run's, not the intent's.
      maxAttempts: 10_000,
      baseDelayMs: 20,
      maxDelayMs: 1000,
      attemptTimeoutMs: 3000,
    };
    return { key, where, input };
  };

  /**
   * One batch in one transaction (recordWithin): a failure (the journal is down) is tried again
   * whole; a key a lost COMMIT did write is then a no-op.
   */
  const recordBatch = async (from: number, count: number): Promise<void> => {
    const batch = Array.from({ length: count }, (_, j) => intentOf(from + j));
    for (;;) {
      const client = await system.pool.connect().catch(() => undefined);
      if (client) {
        // pg emits 'error' on a checked-out client whose server stops: heard once per client.
        if (client.listenerCount('error') === 0) client.on('error', () => undefined);
        let broken = false;
        try {
          await client.query('BEGIN');
          for (const { input } of batch) await journal.recordWithin(client, input);
          await client.query('COMMIT');
          for (const { key, where } of batch) {
            producer.acknowledged.set(key, where);
            producer.phaseOf.set(key, producer.phase);
          }
          return;
        } catch {
          broken = true;
        } finally {
          client.release(broken);
        }
      }
      await sleep(200);
    }
  };

  let producing = true;
  const produce = async (): Promise<void> => {
    for (let i = 0; i < options.intents && performance.now() < options.endsAt; ) {
      const recorded = producer.acknowledged.size;
      if (recorded - producer.settled > BACKLOG || recorded >= producer.ceiling) {
        await sleep(20);
        continue;
      }
      const batch = Math.min(RECORD_BATCH, options.intents - i);
      await recordBatch(i, batch);
      i += batch;
    }
    producing = false;
  };
  const producer: Producer = {
    acknowledged: new Map(),
    phaseOf: new Map(),
    ceiling: 0,
    phase: -1,
    settled: 0,
    get producing() {
      return producing;
    },
    done: Promise.resolve(),
  };
  return Object.assign(producer, { done: produce() });
}
