import { OncelyError, type Ledger, type Clock } from 'oncely';

export interface RetentionSweepOptions {
  /** Whose expired receipts are purged. */
  readonly ledger: Pick<Ledger<unknown>, 'purgeExpired'>;
  /**
   * Times the pauses between purges. A VirtualClock must be in manual mode here: one that moves
   * on every sleep (autoAdvance) would purge in a loop that never yields to real time.
   */
  readonly clock: Clock;
  /** The pause between two purges; the first comes one pause after the start. */
  readonly intervalMs: number;
  /** Told about each purge that failed, as a `purge_failed` OncelyError; the sweep goes on. @default nothing */
  readonly onError?: (error: OncelyError) => void;
}

export interface RetentionSweep {
  /**
   * Stops the sweep: cancels the pause, stops a purge under way between two of its bounded steps
   * (the next start resumes where it stopped), and resolves once that step has committed. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Purges expired receipts in the background (`ledger.purgeExpired()` every `intervalMs`), so
 * retention holds for keys nobody asks about again: a lookup purges only what it finds. A purge
 * that fails is reported and tried again at the next turn; it never stops the server.
 */
export function startRetentionSweep(options: RetentionSweepOptions): RetentionSweep {
  const { ledger, clock, intervalMs } = options;
  const report = (cause: unknown): void => {
    const why = cause instanceof Error ? cause.message : String(cause);
    try {
      options.onError?.(
        new OncelyError('purge_failed', `retention purge failed: ${why}`, { cause }),
      );
    } catch {
      // A failing error handler must not end the sweep, nor the server with an unhandled rejection.
    }
  };
  const aborter = new AbortController();
  const loop = (async () => {
    for (;;) {
      try {
        await clock.sleep(intervalMs, aborter.signal);
      } catch {
        return; // stopped
      }
      try {
        await ledger.purgeExpired(aborter.signal);
      } catch (cause) {
        report(cause);
      }
    }
  })();
  return {
    async stop() {
      aborter.abort();
      await loop;
    },
  };
}
