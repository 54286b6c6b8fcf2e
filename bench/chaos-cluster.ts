/**
 * A throw-away PostgreSQL cluster for bench/chaos, which stops and starts it on purpose: never
 * the machine's shared server. initdb refuses to run as root, so when we are root the cluster's
 * commands run as the `postgres` user (runuser) in a temp directory it owns.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ThrowawayCluster {
  readonly url: string;
  readonly port: number;
  /** `pg_ctl start -w`: resolves once the server accepts connections. */
  start(): void;
  /** `pg_ctl stop -m immediate`: the server dies as on a crash (no checkpoint, WAL replay on start). */
  crash(): void;
  /** CPU time the server's processes have used so far, across restarts (Linux /proc). */
  cpuMs(): number;
  /** Stops the server and removes its directory; safe to call twice. */
  destroy(): void;
}

const CLOCK_TICKS_PER_S = 100;

/**
 * A process's user + system time and its reaped children's, in ms (/proc/PID/stat fields 14-17);
 * 0 when it is gone. `children` adds the live children's own time (a server's backends).
 */
export function processCpuMs(pid: number | 'self', children = false): number {
  const fields = (id: number | string): number[] | undefined => {
    try {
      const stat = readFileSync(`/proc/${id}/stat`, 'utf8');
      return stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
    } catch {
      return undefined;
    }
  };
  // After the name: state is field 3, so field n is at index n - 3.
  const own = fields(pid);
  if (!own) return 0;
  let ticks = own[11]! + own[12]! + own[13]! + own[14]!;
  if (children) {
    for (const entry of readdirSync('/proc')) {
      const child = /^\d+$/.test(entry) ? fields(entry) : undefined;
      if (child && child[1] === pid) ticks += child[11]! + child[12]!;
    }
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

/** Where initdb and pg_ctl live: pg_config's bindir, else the newest /usr/lib/postgresql/N/bin. */
export function postgresBinDir(): string | undefined {
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = [
    fromConfig.status === 0 ? fromConfig.stdout.trim() : '',
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => `/usr/lib/postgresql/${version}/bin`)
      : []),
  ];
  return candidates.find((dir) => dir !== '' && existsSync(join(dir, 'initdb')));
}

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startThrowawayCluster(binDir: string): Promise<ThrowawayCluster> {
  const asRoot = process.getuid?.() === 0;
  // As root the cluster belongs to `postgres`, who must reach its directory: the process's TMPDIR
  // may be private to root (the test runner's is), /tmp never is.
  const root = mkdtempSync(join(asRoot ? '/tmp' : tmpdir(), 'oncely-chaos-pg-'));
  if (asRoot) chownSync(root, uidOf('postgres'), gidOf('postgres'));
  const data = join(root, 'data');
  const port = await freePort();
  const run = (tool: string, args: string[]): void => {
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(binDir, tool), ...args]]
      : [join(binDir, tool), args];
    execFileSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  // fsync off, synchronous_commit on: a commit is acknowledged once its WAL is written to the
  // kernel, which a crash of the server (`-m immediate`, the fault here) does not lose; only a
  // crash of the machine would, and that is not a fault this harness injects. The flushes would
  // only slow the run on a shared disk. Enough connections for every pool plus the harness's own.
  const serverOptions = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off`;
  const start = (): void =>
    run('pg_ctl', ['-D', data, '-o', serverOptions, '-l', join(root, 'log'), '-w', 'start']);
  let earlierCpuMs = 0;
  const serverCpuMs = (): number => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return processCpuMs(pid, true);
    } catch {
      return 0; // not running
    }
  };
  const crash = (): void => {
    earlierCpuMs += serverCpuMs();
    run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
  };
  start();
  let destroyed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    crash,
    cpuMs: () => earlierCpuMs + serverCpuMs(),
    destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        crash();
      } catch {
        // Already stopped.
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}
