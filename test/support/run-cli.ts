import type { CliIo } from '#cli/cli/cli-io.js';
import { runCli } from '#cli/cli/program.js';

export interface CliRun {
  /** The exit code the process would end with. */
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `oncely <args>` in this process, as the binary would, with its output captured: argument
 * handling is tested without a child process per case. `env` replaces the environment it reads.
 */
export async function runOncely(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    exit: () => {},
    env,
    errIsTTY: false,
    onStop: () => () => {}, // nothing here runs until stopped
  };
  const status = await runCli(args, io);
  return { status, stdout, stderr };
}
