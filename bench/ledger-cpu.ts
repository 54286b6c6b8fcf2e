/**
 * CPU time of the bench's server thread, of its PostgreSQL backends and of the whole machine,
 * read from /proc (Linux; elsewhere nothing is read). CPU seconds per request hold up on a
 * loaded machine far better than requests per second: a thread that waits for a core is not
 * charged for the wait.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

const TICKS_PER_SECOND = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a /proc stat line, in µs. */
function cpuUsOf(statPath: string): number | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
  } catch {
    return undefined; // the thread or process is gone
  }
}

/** CPU µs of each thread of this process but the main one. */
export function threadCpu(): Map<string, number> {
  const cpu = new Map<string, number>();
  if (!existsSync('/proc/self/task')) return cpu;
  for (const tid of readdirSync('/proc/self/task')) {
    if (tid === String(process.pid)) continue;
    const us = cpuUsOf(`/proc/self/task/${tid}/stat`);
    if (us !== undefined) cpu.set(tid, us);
  }
  return cpu;
}

/** The CPU µs the busiest thread spent between two readings (the server's, in this bench). */
export function busiestThreadUs(before: Map<string, number>, after: Map<string, number>): number {
  let most = 0;
  for (const [tid, us] of after) most = Math.max(most, us - (before.get(tid) ?? 0));
  return most;
}

/** CPU µs of the given processes (PostgreSQL backends on this machine), summed. */
export function processesCpu(pids: readonly number[]): number {
  let sum = 0;
  for (const pid of pids) sum += cpuUsOf(`/proc/${pid}/stat`) ?? 0;
  return sum;
}

/**
 * Busy CPU µs of the whole machine since boot (user, nice, system, irq, softirq: every process,
 * PostgreSQL's backends too), or NaN where there is no /proc/stat.
 */
export function machineBusyUs(): number {
  if (!existsSync('/proc/stat')) return Number.NaN;
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return ((user! + nice! + system! + irq! + softirq!) * 1e6) / TICKS_PER_SECOND;
}

/** The PostgreSQL backends of the server's pools (found by application_name) and their CPU. */
export interface DatabaseBackends {
  cpu(): Promise<Map<number, number>>;
  close(): Promise<void>;
}

export async function databaseBackends(
  url: string,
  applicationName: string,
): Promise<DatabaseBackends> {
  const monitor = new pg.Client({ connectionString: url });
  await monitor.connect();
  return {
    async cpu() {
      const { rows } = await monitor.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      return new Map(rows.map(({ pid }) => [pid, processesCpu([pid])]));
    },
    close: () => monitor.end(),
  };
}
