// Runs `oncely serve` as a child process for the end-to-end tests and reads what it prints.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../support/repo-path.js';

export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  readonly port: number;
  /** The dev token the banner printed. */
  readonly token: string;
  /** Where the server keeps its SQLite ledger (removed by cleanUp). */
  readonly dataDir: string;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr contains `text` (rejects if the process exits first). */
  waitForStderr(text: string | RegExp): Promise<void>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** SIGTERM if still running, then removes the data directory. */
  cleanUp(): Promise<void>;
}

/** Starts `oncely serve --port 0 --data-dir <fresh dir> ...args` and waits for its banner. */
export async function startServeProcess(
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ServeProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'oncely-e2e-'));
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--port', '0', '--data-dir', dataDir, ...args],
    {
      env: { ...process.env, ONCELY_DEV_TOKEN: '', ONCELY_TOKENS: '', ...env },
    },
  );
  let out = '';
  let err = '';
  const watchers = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    for (const watch of watchers) watch();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let running = true;
  void exited.then(() => {
    running = false;
    for (const watch of watchers) watch();
  });

  const waitForStderr = (text: string | RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (typeof text === 'string' ? err.includes(text) : text.test(err)) {
          watchers.delete(check);
          resolve();
        } else if (!running) {
          watchers.delete(check);
          reject(new Error(`oncely serve exited before printing ${String(text)}:\n${err}`));
        }
      };
      watchers.add(check);
      check();
    });

  await waitForStderr(/dev token +\S+/);
  const url = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(err);
  const token = /dev token +(\S+)/.exec(err)?.[1];
  if (!url || !token) throw new Error(`no URL or token in the banner:\n${err}`);
  return {
    child,
    url: url[1]!,
    port: Number(url[2]),
    token,
    dataDir,
    stdout: () => out,
    stderr: () => err,
    waitForStderr,
    exited,
    async cleanUp() {
      if (running) child.kill('SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
