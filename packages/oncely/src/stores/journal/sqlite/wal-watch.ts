import { utimesSync, watch } from 'node:fs';

/** How a SQLite journal's processes tell each other of a commit through its WAL file. */
export interface WalSignal {
  readonly watch: WatchFile;
  /** Marks the file written (a commit made visible) at `atMs`, so other processes' watches hear it. */
  touch(path: string, atMs: number): void;
}

/**
 * Watches a file for writes: `onWrite` after each (some coalesced), `onGone` once if the file is
 * removed or replaced, or the watch fails (the watch is then over). Resolves with the function
 * that stops it, or undefined where the file cannot be watched (missing, or no file events).
 */
export type WatchFile = (
  path: string,
  onWrite: () => void,
  onGone: () => void,
) => (() => void) | undefined;

/**
 * node:fs watch (inotify on Linux, FSEvents or kqueue elsewhere): a write to the file wakes the
 * event loop, nothing runs while it is quiet, and the watch never keeps the process alive.
 */
export const watchFileWrites: WatchFile = (path, onWrite, onGone) => {
  try {
    let over = false;
    const watcher = watch(path, { persistent: false });
    const end = (): void => {
      if (over) return;
      over = true;
      watcher.close();
      onGone();
    };
    watcher.on('change', (event) => (event === 'change' ? onWrite() : end()));
    watcher.on('error', end);
    return () => {
      over = true;
      watcher.close();
    };
  } catch {
    return undefined;
  }
};

/**
 * The WAL file's times set to `atMs`: an attribute change, which every watch of the file hears
 * (inotify's IN_ATTRIB). SQLite reads neither time. Best effort: a file that cannot be touched
 * leaves the other processes their poll.
 */
export function touchFile(path: string, atMs: number): void {
  try {
    utimesSync(path, atMs / 1000, atMs / 1000);
  } catch {
    // gone, or not ours to change: the looks at data_version remain
  }
}

/** The WAL signal of node:fs. */
export const nodeWalSignal: WalSignal = { watch: watchFileWrites, touch: touchFile };
