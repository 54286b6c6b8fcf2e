/**
 * The second process of bench/ledger-scale: a writer on the same SQLite file or PostgreSQL
 * schema as the sweeping process, running new-key requests back to back through its own ledger
 * and store, and recording each one's latency. The parent sends 'stop'; the writer answers with
 * its count and longest stall, then exits.
 */
import pg from 'pg';
import { createLedger, jsonReceipt, type LedgerStore } from '../src/ledger/index.js';
import { createPostgresStore, type PgPool } from '../src/stores/postgres/index.js';
import { createSqliteStore, openSqliteDatabase } from '../src/stores/sqlite/index.js';
import { BENCH_FINGERPRINT, BENCH_SCOPE } from './ledger-scale-load.js';

export interface WriterTarget {
  readonly backend: 'sqlite' | 'postgres';
  /** The SQLite file, or the PostgreSQL URL. */
  readonly where: string;
  readonly schema?: string;
}

export interface WriterReport {
  readonly writes: number;
  readonly maxStallMs: number;
  readonly errors: number;
}

/**
 * Writes per second each writer aims at: a steady service's load, not a saturating one (two
 * processes writing back to back measure SQLite's unfair file lock, not the sweep).
 */
export const WRITES_PER_SECOND = 50;

/** New-key writes at a steady pace until `stopped()`; the longest one is the stall a sweep caused. */
export async function writeUntil(
  store: LedgerStore<unknown>,
  prefix: string,
  stopped: () => boolean,
): Promise<WriterReport> {
  const gapMs = 1000 / WRITES_PER_SECOND;
  let nextAt = performance.now();
  const ledger = createLedger({ store });
  let writes = 0;
  let errors = 0;
  let maxStallMs = 0;
  while (!stopped()) {
    const started = performance.now();
    const result = await ledger.execute(
      { scope: BENCH_SCOPE, key: `${prefix}-${writes}`, fingerprint: BENCH_FINGERPRINT },
      () => jsonReceipt(201, { ok: true }),
    );
    maxStallMs = Math.max(maxStallMs, performance.now() - started);
    if (result.kind !== 'executed') errors++;
    writes++;
    nextAt += gapMs;
    await new Promise<void>((resolve) =>
      setTimeout(resolve, Math.max(0, nextAt - performance.now())),
    );
  }
  return { writes, maxStallMs, errors };
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
        }) as LedgerStore<unknown>)
      : (createPostgresStore({
          pool: pool as unknown as PgPool,
          ...(target.schema ? { schema: target.schema } : {}),
        }) as LedgerStore<unknown>);
  let stop = false;
  process.on('message', (message) => {
    if (message === 'stop') stop = true;
  });
  // Warm up (open, prepare) before telling the parent it is writing.
  await writeUntil(
    store,
    `warm-${process.pid}`,
    (() => {
      let n = 0;
      return () => n++ >= 20;
    })(),
  );
  process.send('writing');
  const report = await writeUntil(store, `second-${process.pid}`, () => stop);
  await store.close();
  await pool?.end();
  process.send(report, () => process.exit(0));
}
