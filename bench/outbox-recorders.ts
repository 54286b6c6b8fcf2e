/**
 * The application side of bench/outbox: it records intents (jobs), one commit each, as an app
 * does, in the harness's process (not a sender: its CPU is not counted). Every engine gets the
 * same key and body; oncely's intent carries the whole send, a job its key and body.
 */
import type pg from 'pg';
import PgBoss from 'pg-boss';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import { createJournal, type Journal, type JournalStore } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { createSqliteJournalStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import type { Engine } from './outbox-protocol.js';

export interface Recorder {
  /** Makes `set` ready to record into (after the worker prepared it). */
  prepare(set: string): Promise<void>;
  record(set: string, key: string, body: string): Promise<void>;
  close(): Promise<void>;
}

export interface RecorderSetup {
  readonly pool: pg.Pool;
  readonly pgUrl: string;
  readonly schema: string;
  readonly dir: string;
  readonly target: string;
}

export async function createRecorder(engine: Engine, setup: RecorderSetup): Promise<Recorder> {
  if (engine === 'graphile-worker') return graphileRecorder(setup);
  if (engine === 'pg-boss') return pgBossRecorder(setup);
  const journals = new Map<string, Journal<unknown>>();
  const journalOf = async (set: string): Promise<Journal<unknown>> => {
    let journal = journals.get(set);
    if (!journal) {
      const store = (
        engine === 'oncely-postgres'
          ? createPostgresJournalStore({ pool: setup.pool, schema: setup.schema, table: set })
          : createSqliteJournalStore({
              database: () => openSqliteDatabase(`${setup.dir}/${set}.db`),
            })
      ) as JournalStore<unknown>;
      await store.ready();
      journal = createJournal({ store });
      journals.set(set, journal);
    }
    return journal;
  };
  return {
    prepare: async (set) => void (await journalOf(set)),
    async record(set, key, body) {
      await (await journalOf(set)).record({
        key,
        target: setup.target,
        body,
        headers: { 'content-type': 'application/json' },
      });
    },
    async close() {
      for (const journal of journals.values()) await journal.close();
    },
  };
}

async function graphileRecorder(setup: RecorderSetup): Promise<Recorder> {
  const utils: WorkerUtils = await makeWorkerUtils({
    pgPool: setup.pool,
    schema: `${setup.schema}_gw`,
  });
  await utils.migrate();
  return {
    prepare: async () => undefined,
    record: async (_set, key, body) => void (await utils.addJob('deliver', { key, body })),
    close: async () => void (await utils.release()),
  };
}

async function pgBossRecorder(setup: RecorderSetup): Promise<Recorder> {
  const boss = new PgBoss({
    connectionString: setup.pgUrl,
    schema: `${setup.schema}_boss`,
    max: 10,
    supervise: false,
    schedule: false,
  });
  boss.on('error', (error) => console.error('pg-boss:', error));
  await boss.start(); // creates its schema
  return {
    prepare: (set) => boss.createQueue(set),
    record: async (set, key, body) => void (await boss.send(set, { key, body })),
    close: () => boss.stop({ graceful: false, wait: true }),
  };
}
