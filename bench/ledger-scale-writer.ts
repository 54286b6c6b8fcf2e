/**
 * The writers of bench/ledger-scale's sweep measurement: new-key requests at a steady pace
 * through a ledger, each one's latency recorded with its start time, so the parent can split them
 * into the windows when a sweep ran and the windows when none did. The second process (this file
 * run with --child) writes on the same SQLite file or PostgreSQL schema as the sweeping process;
 * the parent sends 'stop', and it answers with its samples, then exits.
 */
import pg from 'pg';
import { createLedger, jsonReceipt, type LedgerStore } from 'oncely';
import type { Durability } from 'oncely';
import { createPostgresStore, type PgPool } from 'oncely/stores/postgres';
import { createSqliteStore, openSqliteDatabase } from 'oncely/stores/sqlite';
import { BENCH_FINGERPRINT, BENCH_SCOPE } from './ledger-scale-load.js';

export interface WriterTarget {
  readonly backend: 'sqlite' | 'postgres';
  /** The SQLite file, or the PostgreSQL URL. */
  readonly where: string;
  readonly schema?: string;
  /** The stores' durability (ledger-store.ts): 'process' takes the fsync out of every commit. */
  readonly durability: Durability;
}

/** One write: when it was due (epoch ms, comparable across processes) and how long it waited. */
export interface WriteSample {
  readonly dueAt: number;
  readonly ms: number;
  readonly ok: boolean;
}

/**
 * Writes per second each writer aims at: a steady service's load, not a saturating one (two
 * processes writing back to back measure SQLite's unfair file lock, not the sweep).
 */
export const WRITES_PER_SECOND = 50;

/** Milliseconds since the epoch, at sub-millisecond resolution, on the same scale in every process. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/**
 * New-key writes at a steady pace until `stopped()`. A write's latency runs from when it was due,
 * not from when it started: a write due while the event loop was blocked (a synchronous SQLite
 * step, a checkpoint) waited for that block too, and a timer that fires late would hide it.
 */
export async function writeUntil(
  store: LedgerStore<unknown>,
  prefix: string,
  stopped: () => boolean,
): Promise<WriteSample[]> {
  const gapMs = 1000 / WRITES_PER_SECOND;
  const ledger = createLedger({ store });
  const samples: WriteSample[] = [];
  let dueAt = epochMs();
  while (!stopped()) {
    const result = await ledger.execute(
      { scope: BENCH_SCOPE, key: `${prefix}-${samples.length}`, fingerprint: BENCH_FINGERPRINT },
      () => jsonReceipt(201, { ok: true }),
    );
    const endedAt = epochMs();
    samples.push({ dueAt, ms: endedAt - dueAt, ok: result.kind === 'executed' });
    // The next write is due one gap later, or now if this one ran past that: a long stall is
    // counted once, not again by every write queued behind it.
    dueAt = Math.max(dueAt + gapMs, endedAt);
    await new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, dueAt - epochMs())));
  }
  return samples;
}

if (process.send && process.argv[2] === '--child') {
  const target = JSON.parse(process.argv[3]!) as WriterTarget;
  const pool =
    target.backend === 'postgres'
      ? new pg.Pool({ connectionString: target.where, max: 2 })
      : undefined;
  const store: LedgerStore<unknown> =
    target.backend === 'sqlite'
      ? (createSqliteStore({
          database: () => openSqliteDatabase(target.where),
          busyTimeoutMs: 30_000,
          durability: target.durability,
        }) as LedgerStore<unknown>)
      : (createPostgresStore({
          pool: pool as unknown as PgPool,
          durability: target.durability,
          ...(target.schema ? { schema: target.schema } : {}),
        }) as LedgerStore<unknown>);
  let stop = false;
  process.on('message', (message) => {
    if (message === 'stop') stop = true;
  });
  // Warm up (open, prepare) before telling the parent it is writing.
  let warm = 0;
  await writeUntil(store, `warm-${process.pid}`, () => warm++ >= 20);
  process.send('writing');
  const samples = await writeUntil(store, `second-${process.pid}`, () => stop);
  await store.close();
  await pool?.end();
  process.send(samples, () => process.exit(0));
}
