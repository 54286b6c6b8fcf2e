import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../support/repo-path.js';

export interface PageServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `oncely serve --port 0` as a child process, on a fresh --data-dir: it serves web/dist at `/`.
 * The URL is read from its banner on stderr (`oncely serve: listening on URL`).
 */
export async function startPageServer(timeoutMs = 10_000): Promise<PageServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'oncely-page-'));
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--quiet'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  };
  let stderr = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`oncely serve printed no URL within ${timeoutMs} ms:\n${stderr}`)),
        timeoutMs,
      );
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        const found = /listening on (http:\/\/\S+)/.exec(stderr);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`oncely serve exited (${code}) before listening:\n${stderr}`));
      });
    });
    return { url, close };
  } catch (error) {
    await close();
    throw error;
  }
}
