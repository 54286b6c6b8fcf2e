import cliProgress from 'cli-progress';
import {
  type IntentRecord,
  type IntentState,
  type StateCounts,
  type Journal,
  createOutboxWorker,
  type SettledEvent,
  type DisabledNotice,
} from 'oncely';
import { EXIT } from '../exit.js';

export interface RunFlags {
  readonly leaseMs: number;
  readonly batchSize: number;
  readonly pollMs: number;
  readonly watch: boolean;
  readonly secrets: Record<string, string>;
  readonly signingSecret: readonly string[] | undefined;
  readonly worker?: string | undefined;
  readonly onlyKey?: string | undefined;
  /** Where a notice goes when the receiver's signals disable an endpoint. */
  readonly disabledNotice?: DisabledNotice | undefined;
}

export interface RunIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Show a progress bar on stderr (a terminal); otherwise one line per finished intent. */
  readonly progressBar: boolean;
  readonly signal: AbortSignal;
  readonly fetch?: typeof globalThis.fetch;
  /** Also told of each settlement (the metrics of `--metrics-port`). */
  readonly onSettled?: ((event: SettledEvent) => void) | undefined;
}

/** The exit code an intent's final state maps to, like `oncely deliver`'s. */
export function exitCodeForIntent(intent: IntentRecord): number {
  switch (intent.state) {
    case 'delivered':
      return EXIT.ok;
    case 'refused':
      return EXIT.fatalStatus;
    case 'unknown':
      return EXIT.unknown;
    case 'gave_up':
      return intent.outcome?.stopReason === 'deadline_passed' ||
        intent.outcome?.stopReason === 'retry_after_too_long'
        ? EXIT.deadlinePassed
        : EXIT.budgetExhausted;
    default:
      return EXIT.failure;
  }
}

/** What one `outbox run` did: the intents it finished, by state, and the journal after it. */
export interface RunSummary {
  /** Intents this run settled for good (pending is always 0 here). */
  readonly finished: StateCounts;
  /** The whole journal when the run ended (its pending ones are what is left). */
  readonly journal: StateCounts;
}

/** The dead-letter states: what `--fail-on-dead` counts. */
const DEAD = ['refused', 'gave_up', 'unknown'] as const;

/** How many intents this run left dead (refused, gave up, unknown). */
export function deadLettersMade(summary: RunSummary): number {
  return DEAD.reduce((n, state) => n + summary.finished[state], 0);
}

export function formatCounts(counts: StateCounts): string {
  return (
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([state, n]) => `${n} ${state}`)
      .join(', ') || 'no intents'
  );
}

/**
 * Runs the outbox worker over the journal: resumes every unfinished intent (or keeps watching with
 * `watch`), with progress, until none is pending or the signal aborts.
 */
export async function runOutbox(
  journal: Journal<unknown>,
  flags: RunFlags,
  io: RunIo,
): Promise<RunSummary> {
  const before = await journal.counts();
  const finishedByState: Record<IntentState, number> = {
    pending: 0,
    delivered: 0,
    refused: 0,
    gave_up: 0,
    unknown: 0,
    cancelled: 0,
  };
  const bar =
    io.progressBar && !flags.watch
      ? new cliProgress.SingleBar(
          {
            stream: process.stderr,
            clearOnComplete: true,
            format: 'outbox [{bar}] {value}/{total} intents finished | {detail}',
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  let finished = 0;
  bar?.start(before.pending, 0, { detail: '' });
  const onSettled = (event: SettledEvent): void => {
    io.onSettled?.(event);
    if (!event.written) {
      io.err(`lease lost on ${event.key}: another worker owns it now\n`);
      return;
    }
    const attempt =
      event.attempt === undefined
        ? 'no attempt'
        : `attempt ${event.attempt}${event.status === null ? '' : ` ${event.status}`}`;
    if (event.state === 'pending') {
      bar?.update(finished, { detail: `${event.key}: ${attempt}, retrying` });
      return;
    }
    finished += 1;
    finishedByState[event.state] += 1;
    if (bar) bar.update(finished, { detail: `${event.key}: ${event.state}` });
    else
      io.out(
        `${event.state.padEnd(9)}  ${event.key}  (${attempt}${event.detail ? `: ${event.detail}` : ''})\n`,
      );
  };
  const worker = createOutboxWorker({
    store: journal.store,
    leaseMs: flags.leaseMs,
    batchSize: flags.batchSize,
    pollMs: flags.pollMs,
    secrets: flags.secrets,
    ...(flags.signingSecret === undefined ? {} : { signingSecret: flags.signingSecret }),
    ...(flags.worker === undefined ? {} : { owner: flags.worker }),
    ...(flags.onlyKey === undefined ? {} : { onlyKey: flags.onlyKey }),
    ...(flags.disabledNotice === undefined ? {} : { disabledNotice: flags.disabledNotice }),
    ...(io.fetch ? { fetch: io.fetch } : {}),
    onSettled,
  });
  try {
    if (flags.watch) await worker.run(io.signal);
    else await worker.resume(io.signal);
  } finally {
    bar?.stop();
  }
  return { finished: finishedByState, journal: await journal.counts() };
}

export { EXIT };
