import { stdoutWriter } from './stdout-closed.js';

/**
 * Where the CLI writes and how it ends: the process's streams and exit code in `oncely`, a
 * capture in the tests that run the program in-process (no child process per case).
 */
export interface CliIo {
  /** Standard output: the command's result. */
  out(text: string): void;
  /**
   * Resolves once what `out` wrote so far has left the process: false when standard output was
   * closed on it (a reader such as `head -1` gone). Absent: it always leaves (a capture).
   */
  outFlushed?(): Promise<boolean>;
  /** Standard error: progress, warnings and the one-line errors. */
  err(text: string): void;
  /** Sets the code the run ends with (the last call wins). */
  exit(code: number): void;
  /** The environment the command reads (ONCELY_TOKENS, ONCELY_DEBUG, ...). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether standard error is a terminal: progress bars are drawn only then. */
  readonly errIsTTY: boolean;
  /**
   * Tells a command that runs until stopped (`serve`) each request to stop, by name: SIGINT and
   * SIGTERM for the process; a test running the program in-process asks by calling `listener`
   * itself (a signal would reach the whole test process). Returns what unsubscribes.
   */
  onStop(listener: (signal: string) => void): () => void;
}

const stdout = stdoutWriter();

/** The real process: its streams, `process.exitCode` and `process.env`. */
export const processIo: CliIo = {
  out: (text) => stdout.write(text),
  outFlushed: () => stdout.flushed(),
  err: (text) => void process.stderr.write(text),
  exit: (code) => {
    process.exitCode = code;
  },
  get env() {
    return process.env;
  },
  get errIsTTY() {
    return process.stderr.isTTY === true;
  },
  onStop: (listener) => {
    process.on('SIGINT', listener);
    process.on('SIGTERM', listener);
    return () => {
      process.off('SIGINT', listener);
      process.off('SIGTERM', listener);
    };
  },
};
