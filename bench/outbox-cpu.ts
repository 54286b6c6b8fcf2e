/**
 * A sender's CPU time over a window: its worker process (every thread) plus the PostgreSQL backends serving its connections, found by their application_name
 * in pg_stat_activity. Backends are looked up again every SAMPLE_MS during the window: one that
 * opens counts from zero, one that closes counts up to its last reading. PostgreSQL's shared
 * processes (WAL writer, checkpointer, autovacuum) are left out: on a shared server they work for
 * every database, and the receiver and the harness (which records the intents) are not senders.
 *
 * Each task's time is read from /proc/<pid>/task/<tid>/schedstat (ns the scheduler ran it),
 * falling back to utime + stime of /proc/<pid>/stat (ledger-cpu.ts), which counts in ticks of
 * 10 ms: a no-op drain costs graphile-worker's 25 backends a few ms each, which ticks round to 0
 * or 10.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { processesCpu } from './ledger-cpu.js';

/** CPU µs of every thread of `pid` so far; 0 when it is gone. */
export function processCpuUs(pid: number): number {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0; // gone
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
    } catch (error) {
      // A thread that ended meanwhile; no schedstat at all (a kernel without it): ticks instead.
      if ((error as { code?: string }).code !== 'ENOENT') return processesCpu([pid]);
    }
  }
  return ns / 1000;
}

const SAMPLE_MS = 200;

export interface CpuWindow {
  /** µs of the worker process. */
  readonly workerUs: number;
  /** µs of its PostgreSQL backends. */
  readonly databaseUs: number;
}

export class SenderCpu {
  readonly #monitor: pg.Client | undefined;
  readonly #applicationName: string | undefined;
  readonly #pid: number;

  /** `monitor` and `applicationName` are absent for a sender without PostgreSQL (SQLite). */
  constructor(pid: number, monitor?: pg.Client, applicationName?: string) {
    this.#pid = pid;
    this.#monitor = monitor;
    this.#applicationName = applicationName;
  }

  async #backends(): Promise<Map<number, number>> {
    if (!this.#monitor) return new Map();
    const { rows } = await this.#monitor.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [this.#applicationName],
    );
    return new Map(rows.map(({ pid }) => [pid, processCpuUs(pid)]));
  }

  /** Opens a window; its `close` gives the CPU spent since. */
  async open(): Promise<{ close(): Promise<CpuWindow> }> {
    const workerBefore = processCpuUs(this.#pid);
    const first = await this.#backends();
    const last = new Map(first);
    let sampling = Promise.resolve();
    const sample = (): void => {
      sampling = sampling.then(async () => {
        // A backend gone between the query and /proc reads as 0: keep its last reading.
        for (const [pid, us] of await this.#backends())
          last.set(pid, Math.max(us, last.get(pid) ?? 0));
      });
    };
    const timer = this.#monitor ? setInterval(sample, SAMPLE_MS) : undefined;
    return {
      close: async () => {
        clearInterval(timer);
        sample();
        await sampling;
        const workerUs = processCpuUs(this.#pid) - workerBefore;
        let databaseUs = 0;
        for (const [pid, us] of last) databaseUs += us - (first.get(pid) ?? 0);
        return { workerUs, databaseUs };
      },
    };
  }
}
