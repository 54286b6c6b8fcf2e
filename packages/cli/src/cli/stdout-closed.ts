/**
 * Standard output as the CLI writes it, when the reader may go away: `oncely outbox list | head
 * -1` closes the pipe after one line, and the next write fails with EPIPE. Node ignores SIGPIPE,
 * so that failure is an 'error' event, and unhandled it crashed the command with a stack trace
 * and could lose a secret shown once. Here a closed stdout ends the command quietly,
 * as SIGPIPE ends a C program: nothing more is written, and the command is asked to stop as on
 * SIGTERM (a `run --watch` finishes its batch and ends; a short command simply completes).
 */
export interface StdoutWriter {
  write(text: string): void;
  /** Resolves once what was written so far has left; false when stdout was closed on it. */
  flushed(): Promise<boolean>;
}

export function stdoutWriter(stream: NodeJS.WritableStream = process.stdout): StdoutWriter {
  let closed = false;
  let last: Promise<boolean> = Promise.resolve(true);
  let watching = false;
  const onError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'EPIPE') throw error;
    if (closed) return;
    closed = true;
    // The handlers of SIGTERM stop the command; with none, emitting does nothing.
    process.emit('SIGTERM', 'SIGTERM');
  };
  return {
    write(text) {
      if (closed) return;
      if (!watching) {
        stream.on('error', onError);
        watching = true;
      }
      last = new Promise((resolve) =>
        stream.write(text, (error) => resolve(error === null || error === undefined)),
      );
    },
    flushed: () => last.then((ok) => ok && !closed),
  };
}
