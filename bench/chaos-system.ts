/**
 * bench/chaos's system under test, all real processes on this machine: a throw-away PostgreSQL
 * cluster holding the journal and one ledger; two receivers on that ledger behind the round-robin
 * proxy; one receiver on a SQLite file; two outbox workers. Each process is supervised.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { seededRandom } from 'oncely';
import { createPostgresJournalStore } from 'oncely/stores/postgres';
import { openSqliteDatabase } from 'oncely/stores/sqlite';
import {
  freePort,
  processCpuMs,
  startThrowawayCluster,
  type ThrowawayCluster,
} from './chaos-cluster.js';
import { startChaosProxy, type ChaosProxy } from './chaos-proxy.js';
import { EFFECTS_DDL, type ReceiverConfig, type WorkerConfig } from './chaos-config.js';
import { supervise, type Supervised } from './chaos-supervisor.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** A killed worker's claims come free after this; longer than an attempt's timeout. */
export const WORKER_LEASE_MS = 5000;

export interface ChaosReceiver {
  readonly process: Supervised;
  readonly store: 'postgres' | 'sqlite';
  /** Its own port: the proxy's upstream, or the SQLite receiver's address. */
  readonly url: string;
}

export interface ChaosSystem {
  readonly cluster: ThrowawayCluster;
  readonly sqliteFile: string;
  readonly proxy: ChaosProxy;
  /** The two PostgreSQL receivers, then the SQLite one. */
  readonly receivers: readonly ChaosReceiver[];
  readonly workers: readonly Supervised[];
  /** Where intents for the PostgreSQL ledger go (the proxy) and those for SQLite. */
  readonly targets: { readonly postgres: string; readonly sqlite: string };
  /** The harness's own pool on the cluster (producer, checks). */
  readonly pool: pg.Pool;
  /** Stops everything; resolves with the CPU time the run used (harness + children, PostgreSQL). */
  teardown(): Promise<{ harnessCpuMs: number; postgresCpuMs: number }>;
}

export interface SystemOptions {
  readonly binDir: string;
  readonly seed: number;
  readonly effectOutsideTransaction: boolean;
  readonly onStderr?: (name: string, line: string) => void;
  readonly onStdout?: (name: string, line: string) => void;
}

export async function startChaosSystem(options: SystemOptions): Promise<ChaosSystem> {
  const cluster = await startThrowawayCluster(options.binDir);
  const dir = mkdtempSync(join(tmpdir(), 'oncely-chaos-'));
  const sqliteFile = join(dir, 'receiver.db');
  const started: Supervised[] = [];
  let proxy: ChaosProxy | undefined;
  const pool = harnessPool(cluster.url);
  // Interrupted (Ctrl-C) or ended by an error: no process and no cluster outlives the harness.
  const onExit = (): void => {
    for (const child of started) child.signal('SIGKILL');
    cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (): void => {
    void teardown().finally(() => process.exit(130));
  };
  process.on('exit', onExit).once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const teardown = async (): Promise<{ harnessCpuMs: number; postgresCpuMs: number }> => {
    await Promise.all(started.map((child) => child.stop()));
    await proxy?.close();
    await pool.end().catch(() => undefined);
    // Every child has exited and been reaped: its time is in this process's children's time.
    const harnessCpuMs = processCpuMs('self');
    const postgresCpuMs = cluster.cpuMs();
    cluster.destroy();
    rmSync(dir, { recursive: true, force: true });
    // Only now: a harness ended during the teardown still kills what is left, on its way out.
    process.off('exit', onExit).off('SIGINT', onSignal).off('SIGTERM', onSignal);
    return { harnessCpuMs, postgresCpuMs };
  };
  try {
    await prepareTables(pool, sqliteFile);

    const node = (script: string, config: object): [string, ...string[]] => [
      process.execPath,
      join(HERE, script),
      JSON.stringify(config),
    ];
    const child = (name: string, command: [string, ...string[]]): Supervised => {
      const supervised = supervise({
        name,
        command,
        onStderr: (line) => options.onStderr?.(name, line),
        onStdout: (line) => options.onStdout?.(name, line),
      });
      started.push(supervised);
      return supervised;
    };
    const receiver = async (
      name: string,
      store: 'postgres' | 'sqlite',
      where: string,
    ): Promise<ChaosReceiver> => {
      const port = await freePort();
      const config: ReceiverConfig = {
        store,
        where,
        port,
        effectOutsideTransaction: options.effectOutsideTransaction,
      };
      const process = child(name, node('chaos-receiver.js', config));
      await process.nextReady();
      return { process, store, url: `http://127.0.0.1:${port}` };
    };
    const workers = [1, 2].map((n) => {
      const config: WorkerConfig = {
        url: cluster.url,
        name: `worker-${n}`,
        leaseMs: WORKER_LEASE_MS,
      };
      return child(`worker-${n}`, node('chaos-worker.js', config));
    });
    const workersReady = Promise.all(workers.map((worker) => worker.nextReady()));
    // Together: the store serialises its table's creation with an advisory lock.
    const receivers = await Promise.all([
      receiver('receiver-pg-1', 'postgres', cluster.url),
      receiver('receiver-pg-2', 'postgres', cluster.url),
      receiver('receiver-sqlite', 'sqlite', sqliteFile),
    ]);
    proxy = await startChaosProxy(
      receivers.slice(0, 2).map((r) => Number(new URL(r.url).port)),
      seededRandom(options.seed, 7),
    );
    await workersReady;
    return {
      cluster,
      sqliteFile,
      proxy,
      receivers,
      workers,
      targets: {
        postgres: `http://127.0.0.1:${proxy.port}/effects`,
        sqlite: `${receivers[2]!.url}/effects`,
      },
      pool,
      teardown,
    };
  } catch (error) {
    await teardown();
    throw error;
  }
}

/** The effects table in both receivers' databases, and the journal's tables, before any process starts. */
async function prepareTables(pool: pg.Pool, sqliteFile: string): Promise<void> {
  await pool.query(EFFECTS_DDL);
  await createPostgresJournalStore({ pool }).ready?.();
  const sqlite = openSqliteDatabase(sqliteFile);
  sqlite.pragma('journal_mode = WAL');
  sqlite.exec(EFFECTS_DDL);
  sqlite.close();
}

/** The harness's own pool (producer, checks); an idle client's error while PostgreSQL is stopped is expected. */
function harnessPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 6, connectionTimeoutMillis: 2000 });
  pool.on('error', () => undefined);
  return pool;
}
