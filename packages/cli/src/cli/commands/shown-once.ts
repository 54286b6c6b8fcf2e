import { OncelyError } from 'oncely';
import type { CliIo } from '../cli-io.js';

/**
 * Prints a secret that is shown once (a new endpoint's or a rotation's signing secret) before
 * the change that makes it the only copy, and waits until it has left: when stdout is already
 * closed (`… | head -0`, a reader gone), the change is refused and nothing is changed, rather
 * than made with a secret nobody saw. Once it has left, a reader that stops after it (`head -1`)
 * has it; what follows it may be dropped quietly (stdout-closed.ts).
 */
export async function showOnce(io: CliIo, line: string): Promise<void> {
  io.out(line);
  if (io.outFlushed !== undefined && !(await io.outFlushed()))
    throw new OncelyError(
      'stdout_closed',
      'standard output is closed, so the signing secret could not be shown: nothing was changed',
    );
}
