// `oncely serve` run in the test's own process: the program the binary runs (runCli), its output
// captured, stopped by a programmatic stop request instead of a signal. A node process per server,
// loading the whole CLI, cost the docs test most of its time; the binary itself is exercised as a
// process by the end-to-end tests (test/e2e/serve-process.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '#cli/cli/cli-io.js';
import { runCli } from '#cli/cli/program.js';

export interface InProcessServe {
  readonly url: string;
  /** The dev token the banner printed. */
  readonly token: string;
  /** The request log so far (one JSON line per request). */
  stdout(): string;
  stderr(): string;
  /** Asks it to stop as SIGTERM would, waits for its exit code, removes the data directory. */
  stop(): Promise<number>;
}

/** Starts `oncely serve --port 0 --data-dir <fresh dir> ...args` and waits for its banner. */
export async function startServeInProcess(args: readonly string[] = []): Promise<InProcessServe> {
  const dataDir = await mkdtemp(join(tmpdir(), 'oncely-serve-'));
  let out = '';
  let err = '';
  let stopListener: ((signal: string) => void) | undefined;
  let bannerDone: () => void = () => {};
  const banner = new Promise<void>((resolve) => (bannerDone = resolve));
  const io: CliIo = {
    out: (text) => void (out += text),
    err: (text) => {
      err += text;
      if (/dev token +\S+/.test(err)) bannerDone();
    },
    exit: () => {},
    // As startServeProcess has it: no tokens from the environment, a fresh dev token.
    env: { ...process.env, ONCELY_DEV_TOKEN: '', ONCELY_TOKENS: '' },
    errIsTTY: false,
    onStop: (listener) => {
      stopListener = listener;
      return () => (stopListener = undefined);
    },
  };
  const exited = runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args], io);
  const early = await Promise.race([banner.then(() => undefined), exited]);
  if (early !== undefined) {
    await rm(dataDir, { recursive: true, force: true });
    throw new Error(`oncely serve exited (${early}) before its banner:\n${err}`);
  }
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err)?.[1];
  const token = /dev token +(\S+)/.exec(err)?.[1];
  if (!url || !token) throw new Error(`no URL or token in the banner:\n${err}`);
  return {
    url,
    token,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      stopListener?.('SIGTERM');
      try {
        return await exited;
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}
