/**
 * bench/chaos's supervisor: keeps one child process running, as systemd or Kubernetes would. A
 * child that exits (killed, or drained after SIGTERM) is started again after `restartDelayMs`. A
 * child says `ready` on its stdout once it serves; the harness times recoveries by it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Supervised {
  readonly name: string;
  /** The running child's pid (undefined between an exit and the restart). */
  readonly pid: number | undefined;
  readonly restarts: number;
  /** Sends a signal to the running child; the supervisor starts a new one after it exits. */
  signal(signal: NodeJS.Signals): void;
  /** Resolves at the next `ready` line, with its time (performance.now()). */
  nextReady(): Promise<number>;
  /** Stops the child for good: SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SuperviseOptions {
  readonly name: string;
  /** The program and its arguments (a shell for a child that needs limits set first). */
  readonly command: readonly [string, ...string[]];
  readonly restartDelayMs?: number;
  /** Told about each line but `ready` the child writes on stdout. */
  readonly onStdout?: (line: string) => void;
  /** Told about each line the child writes on stderr (its crash reports). */
  readonly onStderr?: (line: string) => void;
}

export function supervise(options: SuperviseOptions): Supervised {
  const [program, ...args] = options.command;
  let child: ChildProcess | undefined;
  let stopping = false;
  let restarts = 0;
  let waiters: ((at: number) => void)[] = [];
  let exited: Promise<void> = Promise.resolve();

  const start = (): void => {
    if (process.env.CHAOS_DEBUG)
      console.error(`${(performance.now() / 1000).toFixed(2)} ${options.name} start`);
    const current = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = current;
    createInterface({ input: current.stdout! }).on('line', (line) => {
      if (line !== 'ready') return void options.onStdout?.(line);
      const at = performance.now();
      if (process.env.CHAOS_DEBUG) console.error(`${(at / 1000).toFixed(2)} ${options.name} ready`);
      const ready = waiters;
      waiters = [];
      for (const resolve of ready) resolve(at);
    });
    createInterface({ input: current.stderr! }).on('line', (line) => options.onStderr?.(line));
    exited = new Promise((resolve) =>
      current.on('exit', (code, signal) => {
        if (process.env.CHAOS_DEBUG)
          console.error(
            `${(performance.now() / 1000).toFixed(2)} ${options.name} exited ${code ?? signal}`,
          );
        if (child === current) child = undefined;
        resolve();
        if (stopping) return;
        restarts++;
        setTimeout(() => {
          if (!stopping) start();
        }, options.restartDelayMs ?? 100);
      }),
    );
  };
  start();

  return {
    name: options.name,
    get pid() {
      return child?.pid;
    },
    get restarts() {
      return restarts;
    },
    signal(signal) {
      child?.kill(signal);
    },
    nextReady: () => new Promise((resolve) => waiters.push(resolve)),
    async stop(graceMs = 3000) {
      stopping = true;
      if (!child) return;
      const running = child;
      running.kill('SIGTERM');
      const timer = setTimeout(() => running.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
