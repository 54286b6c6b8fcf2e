import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A crash test's child, started and read up to its "ready" line, still running. */
export interface ReadyChild {
  /** Its first line of standard output that starts with "ready"; undefined if it ended first. */
  readonly ready: string | undefined;
  /** What it wrote to standard error so far. */
  stderr(): string;
  /** Kills it with SIGKILL; resolves with the signal it died of. */
  kill(): Promise<NodeJS.Signals | null>;
}

/** Runs `node ...args` and waits for its "ready" line (or its end). */
export async function spawnUntilReady(args: readonly string[]): Promise<ReadyChild> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  let ready: string | undefined;
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith('ready')) {
      ready = line;
      break;
    }
  }
  return {
    ready,
    stderr: () => stderr,
    kill: () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}
